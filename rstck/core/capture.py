"""What the implementation reports while a check runs, kept in the check's trace.

Log records (WARNING and above), exceptions that end its threads (`threading.excepthook`) and
errors its event loops report become notes in the trace of the session running at that moment,
instead of interleaving with the kit's output. The session also learns from them whether a
publisher surfaced the error the kit's subscriber raised on purpose (the publisher's half of 2.13:
"raise this error condition in a fashion adequate for the runtime environment").
"""

from __future__ import annotations

import contextlib
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any

SessionOf = Callable[[], Any]


def _log_handler(logging: Any, session_of: SessionOf) -> Any:
    class LogHandler(logging.Handler):
        def emit(self, record: Any) -> None:
            _log_record(session_of, record)

    return LogHandler(logging.WARNING)


def _log_record(session_of: SessionOf, record: Any) -> None:
    session = session_of()
    if session is None:
        return
    try:
        message = record.getMessage()
    except BaseException as exc:  # noqa: BLE001 - a record whose arguments do not format: keep what shows
        message = f"{record.msg!r} (its arguments did not format: {type(exc).__name__})"
    exception = record.exc_info[1] if record.exc_info else None
    session.surfacing.report("log", exception, f"log {record.levelname} {record.name}: {message}")


class _Capture:
    """What one `reports_into` block has hooked."""

    def __init__(self, session_of: SessionOf):
        self._session_of = session_of
        self._logging: Any = None
        self._handler: Any = None

    def hook_logging(self, logging: Any) -> None:
        if self._handler is None:
            self._logging, self._handler = logging, _log_handler(logging, self._session_of)
            logging.getLogger().addHandler(self._handler)

    def unhook_logging(self) -> None:
        if self._handler is not None:
            self._logging.getLogger().removeHandler(self._handler)


_active: list[_Capture] = []  # the reports_into blocks under way, the innermost last


def expect_a_report() -> None:
    """The kit is about to hand the implementation an error it should report (2.13's on-purpose error): logging
    is hooked now if it was not, for an implementation may load it only to report that error."""
    for capture in _active[-1:]:  # a slice: the block may end meanwhile, on the thread that watches the check
        import logging

        capture.hook_logging(logging)


@contextlib.contextmanager
def reports_into(session_of: SessionOf) -> Iterator[None]:
    """Route the implementation's logs and thread deaths into `session_of()` while the block runs. Logging is
    hooked at once if it is loaded, else once the kit hands out an error to report (`expect_a_report`): an
    implementation that has not imported it cannot have logged yet, and importing it for every check costs
    each run its start-up."""
    capture = _Capture(session_of)
    logging = sys.modules.get("logging")
    if logging is not None:
        capture.hook_logging(logging)
    _active.append(capture)
    previous_hook = threading.excepthook

    def thread_died(args: threading.ExceptHookArgs) -> None:
        session = session_of()
        if session is None or args.exc_type is SystemExit:
            previous_hook(args)
            return
        name = args.thread.name if args.thread is not None else "a thread"
        session.surfacing.report("thread", args.exc_value, f"{name} ended with an uncaught {args.exc_type.__name__}")

    threading.excepthook = thread_died
    try:
        yield
    finally:
        _active.remove(capture)
        capture.unhook_logging()
        if threading.excepthook is thread_died:
            threading.excepthook = previous_hook
