"""Signal and Trace: what every probe records, and the evidence in every verdict."""

from __future__ import annotations

import dataclasses
import reprlib
import threading
import time

_repr = reprlib.Repr()
_repr.maxstring = 40
_repr.maxother = 40

# Kinds the kit itself performs (calls into the implementation under test) and
# kinds the implementation performs (calls into a kit probe).
SIGNAL_KINDS = frozenset({"on_subscribe", "on_next", "on_error", "on_complete"})
DEMAND_KINDS = frozenset({"request", "cancel"})


class Label(str):
    """Text that a trace shows as it is (a name such as sub#1), not as a repr."""


def show(value: object) -> str:
    """A short, single-line rendering of an argument for the transcript."""
    if isinstance(value, BaseException):
        return f"{type(value).__name__}({_repr.repr(str(value))})"
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 2**31:
        for base, name in ((63, "2**63"), (64, "2**64"), (53, "2**53"), (62, "2**62")):
            for delta in (-1, 0, 1):
                if value == 2**base + delta:
                    return name + ("" if delta == 0 else f"{delta:+d}")
    return _repr.repr(value)


@dataclasses.dataclass(slots=True)
class Signal:
    """One call across the boundary between kit and implementation, or a note."""

    seq: int
    kind: str  # on_next, request, subscribe, ... or "note" / "violation"
    actor: str  # whose method was called: "probe#1", "sub#1", "publisher"
    args: tuple[str, ...] = ()  # rendered when recorded: a trace keeps no object alive (3.13)
    t_ns: int = 0
    thread: str = ""
    thread_id: int = 0
    depth: int = 0  # nesting of calls on this thread at the time of the call
    outcome: str | None = None  # filled in when the call returns: "returned normally", "raised ..."
    returned_ns: int = 0  # when the call returned (0: not yet, or not a call)

    @property
    def duration_s(self) -> float:
        return (self.returned_ns - self.t_ns) / 1e9 if self.returned_ns else 0.0

    def call_text(self) -> str:
        if self.kind in ("note", "violation"):
            return str(self.args[0]) if self.args else ""
        return f"{self.actor}.{self.kind}({', '.join(self.args)})"


class Trace:
    """An append-only, thread-safe record of signals; renders as a numbered transcript."""

    def __init__(self) -> None:
        self._signals: list[Signal] = []
        self._changed = threading.Condition()
        self._depth = threading.local()

    def __len__(self) -> int:
        return len(self._signals)

    def __iter__(self):
        return iter(list(self._signals))

    @property
    def last_ns(self) -> int:
        signals = self._signals
        return signals[-1].t_ns if signals else 0

    def record(self, kind: str, actor: str, args: tuple = (), *, outcome: str | None = None) -> Signal:
        with self._changed:
            signal = Signal(
                seq=len(self._signals) + 1,
                kind=kind,
                actor=actor,
                args=tuple(a if isinstance(a, Label) else show(a) for a in args),
                t_ns=time.monotonic_ns(),
                thread=threading.current_thread().name,
                thread_id=threading.get_ident(),
                depth=getattr(self._depth, "value", 0),
                outcome=outcome,
            )
            self._signals.append(signal)
            self._changed.notify_all()
        return signal

    def note(self, text: str) -> Signal:
        return self.record("note", "", (Label(f"({text})"),))

    def signals_since(self, count: int) -> list[Signal]:
        """The signals recorded after the first `count`."""
        return self._signals[count:]

    def t_ns_before(self, count: int) -> int:
        """When the last of the first `count` signals was recorded (0 for none)."""
        return self._signals[count - 1].t_ns if count else 0

    def wait_for_more(self, count: int, timeout_s: float) -> None:
        """Block until more than `count` signals are recorded, or for `timeout_s`."""
        with self._changed:
            if len(self._signals) <= count:
                self._changed.wait(timeout_s)

    def signals_of(self, actor: str, kind: str) -> list[Signal]:
        return [s for s in list(self._signals) if s.actor == actor and s.kind == kind]

    def enter(self) -> None:
        """A recorded call begins on this thread: later records nest under it."""
        self._depth.value = getattr(self._depth, "value", 0) + 1

    def leave(self) -> None:
        self._depth.value -= 1

    def wait_quiet(self, period_s: float, deadline: float) -> bool:
        """Block until no signal has been recorded for `period_s`; False if the deadline came first."""
        with self._changed:
            while True:
                now = time.monotonic()
                quiet_for = (time.monotonic_ns() - self.last_ns) / 1e9 if self._signals else period_s
                if quiet_for >= period_s:
                    return True
                if now >= deadline:
                    return False
                self._changed.wait(min(period_s - quiet_for, deadline - now))

    def render(self, *, limit: int = 60) -> str:
        """The numbered transcript. Nested calls are indented; threads are named when several occur."""
        signals = list(self._signals)
        threads = {s.thread for s in signals if s.kind not in ("note", "violation")}
        if len(signals) > limit:
            head, tail = signals[: limit // 2], signals[-(limit // 2):]
            hidden = len(signals) - len(head) - len(tail)
            rows = [_row(s, len(threads) > 1) for s in head]
            rows.append(f"{'':>5}  … {hidden} more signals …")
            rows += [_row(s, len(threads) > 1) for s in tail]
        else:
            rows = [_row(s, len(threads) > 1) for s in signals]
        return "\n".join(rows)


def _row(signal: Signal, name_threads: bool) -> str:
    text = "  " * signal.depth + signal.call_text()
    if signal.outcome:
        text = f"{text:<34} -> {signal.outcome}"
    if name_threads and signal.kind not in ("note", "violation"):
        text = f"{text}  [{signal.thread}]"
    return f"{signal.seq:>5}  {text}"
