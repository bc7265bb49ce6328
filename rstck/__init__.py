"""rstck: a conformance test kit and fuzzing harness for Reactive Streams.

What an implementer touches is here, loaded when first used: importing rstck imports nothing else, so the
command starts fast and a user's module that builds a target pays only for what it names.
"""

import importlib
import sys

__version__ = "0.1.0"  # the one place it is written: pyproject.toml reads it, `rstck --version` prints it


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

# The kit's own public names, and the module each comes from; a profile's or an adapter's are its plug-in's
# (rstck/core/plugins.py exports: DraftNames, InProcessTarget).
_PUBLIC = {
    "ErrorNames": "rstck.core.target",
    "NotApplicable": "rstck.core.verdict",
    "ProcessorVerification": "rstck.execution.verification",
    "PublisherVerification": "rstck.execution.verification",
    "RuleViolation": "rstck.core.verdict",
    "SubscriberVerification": "rstck.execution.verification",
    "Target": "rstck.core.target",
    "Unsupported": "rstck.core.verdict",
    "Verdict": "rstck.core.verdict",
    "Verification": "rstck.execution.verification",
    "rule": "rstck.core.checks",
}


# Former names, kept working: "profile" now means a spec profile only (rstck/core/plugins.py).
_FORMER = {"Profile": "ErrorNames", "DraftProfile": "DraftNames"}


def _plugin_exports() -> dict[str, str]:
    from rstck.core.plugins import exported_names  # reads the installed plug-ins: only when a name asks for it

    return exported_names()


def __getattr__(name: str):
    if name == "__all__":
        return sorted({*_PUBLIC, *_plugin_exports(), *_FORMER, "connect"})
    name = _FORMER.get(name, name)
    # A dunder probe (copy, pickle, doctest) never reads the plug-ins.
    module = _PUBLIC.get(name) or (None if name.startswith("__") else _plugin_exports().get(name))
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def connect(url: str, **options):
    """A connection to a server of the network protocol (`tcp://HOST:PORT`) whose `publisher(name)` is an
    ordinary Publisher; close it (or use it in a `with`) to say goodbye. See docs/wire-format.md."""
    from rstck.protocols.network.connection import connect_threaded  # asyncio and msgpack load only when used

    return connect_threaded(url, **options)


def __dir__():
    return __getattr__("__all__")
