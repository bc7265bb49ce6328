"""The echo adapter: `echo:MODULE:FUNCTION` names a Python function that answers a line with a line."""

import importlib

from rstck import Target
from rstck.core.plugins import Adapter
from rstck.core.verdict import BadInput

PREFIX = "echo:"


class EchoTarget(Target):
    capabilities = frozenset({"echo"})
    may_serve = frozenset({"echo"})

    def __init__(self, spec, service):
        super().__init__()
        self.name, self.service = spec, service

    def context(self, kind, session, rule):
        return Line(self.service, session) if kind == "line" else super().context(kind, session, rule)


class Line:
    """A line to the service: each send is recorded in the check's trace."""

    def __init__(self, service, session):
        self.service, self.session = service, session

    def send(self, text):
        answer = self.service(text)
        self.session.trace.note(f"sent {text!r}, answered {answer!r}")
        return answer


def load(spec):
    module, _, function = spec[len(PREFIX):].partition(":")
    try:
        return EchoTarget(spec, getattr(importlib.import_module(module), function))
    except (ImportError, AttributeError, ValueError) as exc:
        raise BadInput(f"target {spec!r}: {exc}") from None


ADAPTER = Adapter(name="echo", schemes=(PREFIX,), loader="echo_kit.adapter:load",
                  describes="echo:MODULE:FUNCTION for an echo service",
                  rerun=lambda spec: [spec],
                  # Its services are Python functions: the kit's Python scripts would reproduce its findings, for
                  # the items of a profile whose scripts judge them (Profile.reproduced_in; the echo profile has none).
                  reproducers={PREFIX: "python"},
                  exports={"EchoTarget": "echo_kit.adapter"})
