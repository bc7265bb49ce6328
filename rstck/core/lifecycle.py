"""The end of one check, and what it opened that must be closed then.

A check that returns is finished as a well-behaved peer would end it (`finish`); once it is judged, or given
up at its deadline (`abandon`), it is sealed: what it left behind is counted from then on, not judged. Closing
it closes what it opened (connections, client runs, processes, its event loop and executor), the last opened
first.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from rstck.core.kit_threads import start_kit_thread
from rstck.core.signals import show
from rstck.core.thread_states import read_states

if TYPE_CHECKING:
    from rstck.core.session import Session


class Lifecycle:
    """Where one check is in its life: running, returned (`check_returned`), sealed (`sealed`), closed."""

    def __init__(self, session: Session):
        self._session = session
        self.check_returned = False  # the check ran to its end: it decided its own item
        self.sealed = False  # the check is over: what it left behind is counted, not recorded or judged
        self._to_close: list[tuple[Callable[[], object], str]] = []

    def close_at_end(self, close: Callable[[], object], what: str) -> None:
        """Call `close` when the check ends, whatever it raised; `what` names it in the trace if closing fails."""
        self._to_close.append((close, what))

    def finish(self) -> None:
        """The check returned: raise what it found, then end what the kit's ends still hold open
        (rstck.core.kit_ends), and raise what that shows."""
        session = self._session
        self.check_returned = True
        session.findings.raise_pending(every=True)
        session.ends.wind_down()
        session.findings.raise_pending(every=True)

    def seal(self) -> None:
        """The check is over: from now on what it left behind (threads still delivering, calls that return
        late) is counted, not recorded or judged."""
        self.sealed = True
        self._session.trace.recording = False
        self._session.ends.sealed()

    def abandon(self) -> None:
        """The check was given up at its deadline: sealed, and the subscriptions its probes still hold are
        cancelled (on a thread of their own: the cancel may hang as well)."""
        self.seal()
        open_probes = self._session.ends.open_probes()

        def cancel_all() -> None:
            for probe in open_probes:
                probe.cancel()

        if open_probes:
            start_kit_thread(cancel_all, "rstck-abandon")

    def leftovers(self) -> list[str]:
        """The threads an abandoned check left busy (on a CPU or waiting for one): its own, and the
        implementation's it watched. Parked or blocked threads cost nothing and are not listed."""
        settler = self._session.settler
        threads = settler.threads.watched(settler.signalling())
        check_thread = self._session.check_thread
        if check_thread is not None and check_thread.is_alive():
            threads[check_thread.ident] = check_thread
        states = read_states(threads)
        return [thread.name if thread is not None else str(ident)
                for ident, thread in threads.items() if states[ident].kind == "running"]

    def close(self) -> None:
        """Close what the check opened, the last opened first; a failure is noted in the trace and does not keep
        the next one open."""
        session = self._session
        session.target.session_closed(session)
        while self._to_close:
            close, what = self._to_close.pop()
            try:
                close()
            except Exception as exc:  # one resource's trouble must not leave the next one open
                session.trace.note(f"closing {what} failed: {show(exc)}")
