"""Targets that end the process they run in, named by MODULE:ATTR strings for the tests of supervision
(`pytest --rstck-target tests.zoo.process_enders:exits_on_request_zero`)."""

from __future__ import annotations

import ctypes
import os

from rstck import InProcessTarget

from . import publishers as p


class _ExitsOnRequestZero(p.Subscription):
    """Correct, except that request(0) ends the process at once with status 3 (no cleanup, no flush):
    the checks of 3.9 end their process; every other check passes."""

    def request(self, n: int) -> None:
        if n == 0:
            os._exit(3)
        super().request(n)


class _ExitingPublisher(p.Publisher):
    subscription = _ExitsOnRequestZero


exits_on_request_zero = InProcessTarget(create_publisher=_ExitingPublisher, name="exits on request(0)")


class _RecordingPublisher(p.Publisher):
    """Correct; appends the id of the process it was made in to the file $RSTCK_TEST_PIDS names."""

    def __init__(self, n: int):
        super().__init__(n)
        with open(os.environ["RSTCK_TEST_PIDS"], "a", encoding="utf-8") as out:
            out.write(f"{os.getpid()}\n")


records_its_process = InProcessTarget(create_publisher=_RecordingPublisher, name="records its process")


class _HoldsTheInterpreterOnRequestZero(p.Subscription):
    """Correct, except that request(0) calls C's sleep(600) holding the interpreter lock (as a C extension
    can): no Python thread of the process runs meanwhile, so only a watchdog outside it can stop it."""

    def request(self, n: int) -> None:
        if n == 0:
            ctypes.PyDLL(None).sleep(600)
        super().request(n)


class _HoldingPublisher(p.Publisher):
    subscription = _HoldsTheInterpreterOnRequestZero


holds_the_interpreter_on_request_zero = InProcessTarget(create_publisher=_HoldingPublisher,
                                                        name="holds the interpreter on request(0)")
