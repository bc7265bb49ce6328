"""rstck: a conformance test kit and fuzzing harness for Reactive Streams."""

import sys


def _leave_the_kits_assertions_alone() -> None:
    """pytest rewrites the assertions of every module of a distribution that registers a pytest
    plugin, on every run where it cannot cache the result; the kit's verdicts never come from
    `assert`, so that work buys nothing. Only pytest's own hook is touched, and only if it is
    the one known (a `_must_rewrite` set of package names)."""
    for finder in sys.meta_path:
        marked = getattr(finder, "_must_rewrite", None)
        if type(finder).__name__ == "AssertionRewritingHook" and isinstance(marked, set):
            marked.discard(__name__)


_leave_the_kits_assertions_alone()

from rstck.adapters.inprocess import InProcessTarget
from rstck.core.checks import rule
from rstck.core.target import DraftProfile, Profile, Target
from rstck.core.verdict import NotApplicable, RuleViolation, Unsupported, Verdict
from rstck.plugin.verification import (ProcessorVerification, PublisherVerification, SubscriberVerification,
                           Verification)



def connect(url: str, **options):
    """A connection to a server of the network protocol (`tcp://HOST:PORT`) whose `publisher(name)` is an
    ordinary Publisher; close it (or use it in a `with`) to say goodbye. See docs/wire-format.md."""
    from rstck.protocols.network.connection import connect_threaded  # asyncio and msgpack load only when used

    return connect_threaded(url, **options)


__all__ = ["DraftProfile", "InProcessTarget", "connect", "NotApplicable", "ProcessorVerification", "Profile", "PublisherVerification",
           "RuleViolation", "SubscriberVerification", "Target", "Unsupported", "Verdict", "Verification", "rule"]
