"""How the bridge to a Node process fails, as the kit sees it: there is no `node` to run, the process ended,
the check that used it was given up, or the driver did not answer by a deadline."""

from __future__ import annotations

from rstck.core.verdict import BadInput


class NodeMissing(BadInput):
    """There is no `node` to run."""


class ProcessEnded(Exception):
    """The Node process ended: the implementation called process.exit(), crashed, or was stopped.
    `during_call`: it ended inside the call that raises this (else it had ended before the call was made)."""

    def __init__(self, text: str, *, during_call: bool = False):
        super().__init__(text)
        self.during_call = during_call


class Abandoned(Exception):
    """The check that uses the process was given up (at its deadline): the process has been stopped."""


class NoReply(Exception):
    """The driver did not answer by the deadline: it runs synchronous code that does not return."""
