"""The kit's calls into the implementation: each one recorded in the trace, what it raises charged to the rule
that forbids the raise, and each one under way known (`outstanding`), so that a call that never returns is
charged to the rule its hang breaks.

Whatever the implementation raises is its own doing, BaseExceptions included (a KeyboardInterrupt or SystemExit
raised by its code is no signal to the kit: a check runs on a thread of its own, and a real interrupt from the
terminal reaches the main thread only).
"""

from __future__ import annotations

import contextlib
import dataclasses
import threading
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, Callable

from rstck.core.evidence import CALL, recorded
from rstck.core.signals import show

if TYPE_CHECKING:
    from rstck.core.session import Session

# Where a supervised worker keeps the call it is in (rstck.execution.supervise), for when the target kills it.
CALL_STATUS: Callable[[str], None] | None = None


class RetryCallMode(BaseException):
    """The way the kit makes its calls does not suit the implementation (it runs an event loop of its own
    inside a call, or it needs a running one): the check starts over with calls made the other way. A
    BaseException, so that no `except Exception` between the call and the runner swallows it."""


@dataclasses.dataclass(eq=False)
class Outstanding:
    """A call between the kit and the implementation that has not returned yet: what to charge if it never does."""

    text: str  # as the trace shows it: "sub#1.request(1)"
    rule: str  # the rule a hang here breaks; "" for a factory (a target error) or a call into the kit
    method: str  # "request", "create_publisher", ...
    since: float  # time.monotonic() when it began
    thread: int = dataclasses.field(default_factory=threading.get_ident)  # the thread it is under way on


class Calls:
    """One check's calls into the implementation, made the way its target says (`Target.invoke`)."""

    def __init__(self, session: Session):
        self._session = session  # what the target's invoke is told the call belongs to
        self._target = session.target
        self._trace = session.trace
        self._findings = session.findings
        self._surfacing = session.surfacing
        self._labels = session.labels
        self.outstanding: list[Outstanding] = []  # calls under way, innermost last
        # The implementation's calls into the kit under way (a probe's signal, a kit subscription's request): a
        # thread of the implementation's waiting inside the kit looks idle to settling, but is not.
        self.handling: list[Outstanding] = []

    def invoke(self, function: Callable[..., Any], args: tuple = ()) -> Any:
        """Call into the implementation the way its target says (e.g. inside the target's running loop)."""
        return self._target.invoke(self._session, function, args)

    def make(self, obj: Any, method: str, args: tuple, *, actor: str, rule_if_raises: str,
             rule_if_hangs: str | None = None, check_goes_on: bool = False) -> BaseException | None:
        """Call a method of the implementation, record it, and charge a raise to `rule_if_raises`
        (`check_goes_on`: the raise does not stop the check, which still judges what else the call did).
        Returns what the call raised, if anything."""
        if type(obj).__module__.startswith("rstck.") and not callable(getattr(obj, method, None)):
            # The kit's own stand-in for the implementation's object (an adapter's proxy) lacks the method:
            # a defect of the kit, never a raise of the implementation's.
            raise AssertionError(f"the kit's stand-in {self._labels.of(obj)} has no {method}() method")
        signal = self._trace.record(method, actor, args)
        hang_rule = rule_if_hangs or {"cancel": "3.5"}.get(method, rule_if_raises)
        with self.underway(signal.call_text(), hang_rule, method):
            raised = self._attempt(obj, method, args)
            signal.returned_ns = time.monotonic_ns()
            if raised is None:
                signal.outcome = "returned normally"
            elif self._surfacing.carried_by(raised):
                carried = "" if raised is self._surfacing.error else f"{show(raised)}, carrying "
                signal.outcome = f"raised {carried}the kit's on-purpose error back (2.13: surfaced to the caller)"
                self._surfacing.surfaced.append("raised")
            else:
                instead = (self._target.call_not_made(raised, signal.call_text())
                           or self._target.loop_retry(raised, signal.call_text()))
                if instead is not None:
                    raise instead from raised
                signal.outcome = f"raised {show(raised)}"
                self._findings.violate(rule_if_raises, f"{method}() to return normally",
                                       f"#{signal.seq} raised {show(raised)}", check_goes_on=check_goes_on,
                                       claim=CALL)
        return raised

    @recorded("expect_raise", lambda calls, evidence, obj, method, args, *, error_type, rule, actor="publisher": {
        "on": evidence.value(obj), "method": method, "args": [evidence.value(a) for a in args],
        "error_type": error_type, "rule": rule}, lambda calls: calls._session.evidence)
    def expecting_error(self, obj: Any, method: str, args: tuple, *, error_type: str, rule: str,
                        actor: str = "publisher") -> None:
        """Call a method that the rule says must raise `error_type` to its caller (1.9, 2.13)."""
        signal = self._trace.record(method, actor, args)
        with self.underway(signal.call_text(), rule, method):
            raised = self._attempt(obj, method, args)
            if raised is None:
                signal.outcome = "returned normally"
                self._findings.violate(rule, f"{method}() to raise {error_type}", f"#{signal.seq} returned normally",
                                       claim=CALL)
                return
            not_made = self._target.call_not_made(raised, signal.call_text())
            if not_made is not None:
                raise not_made from raised
            signal.outcome = f"raised {show(raised)}"
            if error_type not in {cls.__name__ for cls in type(raised).__mro__}:
                self._findings.violate(rule, f"{method}() to raise {error_type}",
                                       f"#{signal.seq} raised {show(raised)}", claim=CALL)

    def _attempt(self, obj: Any, method: str, args: tuple) -> BaseException | None:
        """Make the call; what the implementation raised, if anything (RetryCallMode goes on to the runner)."""
        try:
            self.invoke(getattr(obj, method), args)
        except RetryCallMode:
            raise
        except BaseException as exc:  # noqa: BLE001 - the implementation's own doing (the module's docstring)
            return exc
        return None

    @contextlib.contextmanager
    def underway(self, text: str, rule: str, method: str) -> Iterator[Outstanding]:
        """Marks a call into the implementation as under way (nested in the trace): if it never returns, the
        runner charges `rule` (a factory, with rule "", is a target error)."""
        entry = Outstanding(text, rule, method, time.monotonic())
        self.outstanding.append(entry)
        if CALL_STATUS is not None:
            CALL_STATUS(text)
        self._trace.enter()
        try:
            yield entry
        finally:
            self._trace.leave()
            self.outstanding.remove(entry)
            if CALL_STATUS is not None:
                CALL_STATUS(self.outstanding[-1].text if self.outstanding else "")

    @contextlib.contextmanager
    def handled(self, text: str, method: str) -> Iterator[None]:
        """Marks a call of the implementation's into the kit (`text`, as the trace shows it) as under way."""
        entry = Outstanding(text, "", method, time.monotonic())
        self.handling.append(entry)
        try:
            yield
        finally:
            self.handling.remove(entry)

    def stuck(self) -> Outstanding | None:
        """The call a check (or a fuzz step) that never returned is stuck in: the innermost under way on its own
        thread, else the innermost anywhere."""
        own = [e for e in self.outstanding if e.thread == self._session.check_thread_id]
        return (own or self.outstanding or [None])[-1]

    def under_way_elsewhere(self) -> list[Outstanding]:
        """What passes between the kit and the implementation on threads other than this one, not returned yet:
        the kit's calls into it, innermost last, then its calls into the kit. While any is under way, the
        implementation may still do more (a blocked call goes on once let through), so no silence is judged."""
        me = threading.get_ident()
        return [e for e in (*self.outstanding, *self.handling) if e.thread != me]
