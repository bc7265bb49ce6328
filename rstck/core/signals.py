"""Signal and Trace: what every probe records, and the evidence in every verdict.

A trace keeps a bounded window of what happened, whatever the length of the stream: the first
and the last signals, and every violation with the signals just before it; what lies between
is counted and shown as elided. An argument is kept as it is when it is small and cheap to keep
(an int, a short string), else as a short text made when it is recorded, so that a trace never
keeps a large or a user's object alive, and never runs a user's `__repr__`.
"""

from __future__ import annotations

import collections
import dataclasses
import itertools
import threading
import time
from collections.abc import Callable
from typing import Any

_get_ident = threading.get_ident
_monotonic_ns = time.monotonic_ns
SMALL_INT_LOW, SMALL_INT_HIGH = -2**62, 2**62  # ints in this range are kept as they are

# The window a trace keeps in full.
HEAD = 200
TAIL = 200
CONTEXT = 8  # signals kept before each violation
SHOWN_CHARS = 40
# Of an exception's message: enough to say what went wrong ("… object has no attribute 'request'").
ERROR_SHOWN_CHARS = 120


class Label(str):
    """Text that a trace shows as it is (a name such as sub#1), not as a repr."""


class Deferred:
    """Text that a trace shows as it is, made only if the trace is shown: what a long stream records per element
    (a frame read off the wire) costs a tuple, not a formatted line. It must hold only plain data (no object
    of the implementation's: a trace keeps nothing alive)."""

    __slots__ = ("_make", "_args")

    def __init__(self, make: Callable[..., str], *args: Any):
        self._make, self._args = make, args

    def __str__(self) -> str:
        return self._make(*self._args)


_CONTROL = {c: f"\\x{c:02x}" for c in range(32) if chr(c) not in "\n\t"} | {127: "\\x7f"}


def escape_controls(text: str) -> str:
    """`text` with terminal control characters (ESC and the like) shown as escapes, never sent raw."""
    return text.translate(_CONTROL)


def _safe_str(value: object) -> str:
    try:
        return str(value)
    except BaseException as exc:  # noqa: BLE001 - a user's __str__ may raise anything
        return f"<str() raised {type(exc).__name__}>"


def _named_power(value: int) -> str | None:
    for base, name in ((63, "2**63"), (64, "2**64"), (53, "2**53"), (62, "2**62")):
        for delta in (-1, 0, 1):
            if value == 2**base + delta:
                return name + ("" if delta == 0 else f"{delta:+d}")
    return None


def show(value: object) -> str:
    """A short, single-line rendering of an argument, built in bounded time: builtins by value (cut to a
    few dozen characters before they are rendered), exceptions by class and message, anything else by its
    class name: a user's `__repr__` is never run."""
    if isinstance(value, Label):
        return value
    if value is None or isinstance(value, (bool, float)):
        return repr(value)
    if isinstance(value, int):
        if value.bit_length() > 128:
            return f"<int of {value.bit_length()} bits>"
        named = _named_power(abs(value)) if abs(value) >= 2**31 else None
        return ("-" if value < 0 else "") + named if named else repr(value)
    if isinstance(value, (str, bytes, bytearray)):
        cut = value[:SHOWN_CHARS]
        return repr(cut) + ("…" if len(value) > SHOWN_CHARS else "")
    if isinstance(value, BaseException):
        message = _safe_str(value)
        shown = repr(message[:ERROR_SHOWN_CHARS]) + ("…" if len(message) > ERROR_SHOWN_CHARS else "")
        return f"{escape_controls(type(value).__name__)}({shown})"
    if type(value).__module__.startswith("rstck."):  # the kit's own objects (probes, subscriptions) name themselves
        return repr(value)
    if isinstance(value, (tuple, list)) and len(value) <= 4:
        inner = ", ".join(show(v) for v in value)
        return f"({inner}{',' if len(value) == 1 else ''})" if isinstance(value, tuple) else f"[{inner}]"
    return f"<{escape_controls(type(value).__name__)}>"


def _keepable(value: object) -> bool:
    """Small enough to keep as it is and render only if a trace is shown."""
    return value is None or (type(value) is int and SMALL_INT_LOW < value < SMALL_INT_HIGH) or type(value) in (bool,
                                                                                                         float)


def kept_as(value: object) -> object:
    """What a trace keeps of an argument: the value itself when small (or Deferred), else its short text."""
    return value if _keepable(value) or type(value) is Deferred else Label(show(value))


@dataclasses.dataclass(slots=True)
class Signal:
    """One call across the boundary between kit and implementation, or a note."""

    seq: int
    kind: str  # on_next, request, subscribe, ... or "note" / "violation"
    actor: str  # whose method was called: "probe#1", "sub#1", "publisher"
    args: tuple = ()  # kept small (see `_keepable`) or rendered when recorded: a trace keeps no object alive
    t_ns: int = 0
    thread_id: int = 0
    depth: int = 0  # nesting of calls on this thread at the time of the call
    outcome: str | None = None  # filled in when the call returns: "returned normally", "raised ..."
    returned_ns: int = 0  # when the call returned (0: not yet, or not a call)
    thread: str = ""  # the thread's name (filled in by the trace)

    @property
    def duration_s(self) -> float:
        return (self.returned_ns - self.t_ns) / 1e9 if self.returned_ns else 0.0

    def call_text(self) -> str:
        if self.kind in ("note", "violation", "wire"):
            return str(self.args[0]) if self.args else ""
        return f"{self.actor}.{self.kind}({', '.join(show(a) for a in self.args)})"


class Tape:
    """The on_next signals one probe took in on its fast path: numbered in the trace's sequence, the
    first HEAD and the last TAIL of them kept, as (seq, argument, thread id, depth)."""

    __slots__ = ("actor", "head", "tail")

    def __init__(self, actor: str):
        self.actor = actor
        self.head: list[tuple] = []
        self.tail: collections.deque[tuple] = collections.deque(maxlen=TAIL)


class Trace:
    """A thread-safe record of signals; renders as a numbered transcript.

    Its memory is bounded: the first HEAD and last TAIL signals, every violation and the CONTEXT
    signals before it. `count` is how many were recorded in all (their numbers run 1..count).
    Once `recording` is off (the check was abandoned) only the count goes on.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._waiting = 0
        self.count = 0  # signals recorded so far (the number of the last one)
        self._numbers = itertools.count(1)
        self.recording = True
        self.last_ns = 0
        self._head: list[Any] = []
        self._tail: collections.deque[Any] = collections.deque(maxlen=TAIL)
        self._kept: dict[int, Any] = {}
        self._tapes: list[Tape] = []
        self._names: dict[int, str] = {}
        self._depth: dict[int, int] = {}  # thread id -> nesting of recorded calls (a dict: fast to read)
        # For settling: each thread that recorded, and the longest it took to, after the record before.
        self.longest_gap_ns: dict[int, int] = {}

    def __len__(self) -> int:
        return self.count

    def __iter__(self):
        return iter(self.signals())

    def record(self, kind: str, actor: str, args: tuple = (), *, outcome: str | None = None) -> Signal:
        """Record a call or a note, and return it (its `outcome` may be filled in later)."""
        thread_id = threading.get_ident()
        args = tuple(a if isinstance(a, Label) or _keepable(a) else Label(show(a)) for a in args)
        signal = Signal(0, kind, actor, args, time.monotonic_ns(), thread_id, self._depth.get(thread_id, 0),
                        outcome, thread=threading.current_thread().name)
        self._append(signal, thread_id, signal.t_ns)
        return signal

    def record_fast(self, kind: str, actor: str, arg: Any) -> int:
        """Record a signal that nothing will update later (an on_next the probe takes in) as a tuple, not an
        object; its number. The hot path of a long stream, kept lean on purpose: no lock (the number comes
        from an atomic counter, the windows are appended to atomically, and the order is restored by number
        when they are read)."""
        thread_id = _get_ident()
        if type(arg) is not int or not SMALL_INT_LOW < arg < SMALL_INT_HIGH:
            arg = kept_as(arg)
        t_ns = _monotonic_ns()
        count = next(self._numbers)
        if count > self.count:
            self.count = count
        if self.recording:
            if thread_id not in self._names:
                self._names[thread_id] = threading.current_thread().name
            gap = t_ns - self.last_ns
            if gap > self._gap_of(thread_id):
                self.longest_gap_ns[thread_id] = gap
            self.last_ns = t_ns
            entry = (count, kind, actor, arg, t_ns, thread_id, self._depth.get(thread_id, 0))
            (self._head if count <= HEAD else self._tail).append(entry)
            if self._waiting:
                with self._lock:
                    self._changed.notify_all()
        return count

    def tape(self, actor: str) -> Tape:
        """A tape for `actor`'s fast-path on_next signals, rendered with the rest of the trace."""
        tape = Tape(actor)
        self._tapes.append(tape)
        return tape

    def saw(self, thread_id: int) -> None:
        """A fast-path record came from `thread_id` (not the check's thread): note the thread, its gap, and
        wake whoever waits for more (settling)."""
        self._note_activity(thread_id, _monotonic_ns())
        if self._waiting:
            with self._lock:
                self._changed.notify_all()

    def _note_activity(self, thread_id: int, t_ns: int) -> None:
        """Name the thread, and keep its longest gap between two records (what quiet windows are made of).
        record_fast does the same inline: it is the hot path."""
        if thread_id not in self._names:
            self._names[thread_id] = threading.current_thread().name
        gap = t_ns - self.last_ns
        if gap > self._gap_of(thread_id):
            self.longest_gap_ns[thread_id] = gap
        self.last_ns = t_ns

    def _gap_of(self, thread_id: int) -> int:
        return self.longest_gap_ns.get(thread_id, -1) if self.last_ns else 1 << 62  # the first record has no gap

    def _append(self, entry: Signal, thread_id: int, t_ns: int) -> int:
        with self._lock:
            count = next(self._numbers)
            if count > self.count:
                self.count = count
            if not self.recording:
                return count
            self._note_activity(thread_id, t_ns)
            entry.seq = count
            if count <= HEAD:
                self._head.append(entry)
            else:
                if entry.kind == "violation":
                    earlier = sorted([*list(self._tail)[-CONTEXT:], *(_tape_entry(t, e) for t in self._tapes
                                                                        for e in list(t.tail)[-CONTEXT:])],
                                     key=_seq)[-CONTEXT:]
                    self._kept.update((_seq(e), e) for e in earlier)
                    self._kept[count] = entry
                self._tail.append(entry)
            if self._waiting:
                self._changed.notify_all()
            return count

    def note(self, text: str) -> Signal:
        return self.record("note", "", (Label(f"({text})"),))

    def signals(self) -> list[Signal]:
        """The signals kept, in order, as Signal objects."""
        with self._lock:
            entries = {_seq(e): e for e in (*list(self._head), *self._kept.values(), *list(self._tail))}
            for tape in self._tapes:
                entries.update((e[0], _tape_entry(tape, e)) for e in (*list(tape.head), *list(tape.tail)))
            names = dict(self._names)
        return [self._signal(entries[seq], names) for seq in sorted(entries)]

    @staticmethod
    def _signal(entry: Any, names: dict[int, str]) -> Signal:
        if isinstance(entry, Signal):
            entry.thread = names.get(entry.thread_id, "")
            return entry
        seq, kind, actor, arg, t_ns, thread_id, depth = entry
        return Signal(seq, kind, actor, (arg,), t_ns, thread_id, depth, thread=names.get(thread_id, ""))

    def signals_of(self, actor: str, kind: str) -> list[Signal]:
        return [s for s in self.signals() if s.actor == actor and s.kind == kind]

    def actors_since(self, count: int) -> set[tuple[str, int]]:
        """(actor, thread id) of each record after record number `count` (of what the trace keeps): whose method was
        called, and on which thread."""
        found: set[tuple[str, int]] = set()
        with self._lock:
            for entries in (self._tail, self._head):
                for entry in reversed(entries):
                    if _seq(entry) <= count:
                        break
                    found.add((entry.actor, entry.thread_id) if isinstance(entry, Signal) else (entry[2], entry[5]))
            tapes = [(tape.actor, tape.head, tape.tail) for tape in self._tapes]
        for actor, head, tail in tapes:
            for entries in (tail, head):
                for entry in reversed(entries):
                    if entry[0] <= count:
                        break
                    found.add((actor, entry[2]))
        return found

    def wait_for_more(self, count: int, timeout_s: float) -> None:
        """Block until more than `count` signals are recorded, or for `timeout_s`."""
        with self._changed:
            if self.count <= count:
                self._waiting += 1
                try:
                    self._changed.wait(timeout_s)
                finally:
                    self._waiting -= 1

    def enter(self) -> None:
        """A recorded call begins on this thread: later records nest under it."""
        thread_id = _get_ident()
        self._depth[thread_id] = self._depth.get(thread_id, 0) + 1

    def leave(self) -> None:
        thread_id = _get_ident()
        self._depth[thread_id] -= 1

    def nest_under_nothing(self) -> int:
        """Records made on this thread from now on nest under nothing; the depth to give back to
        `nest_again` (see Session.apart)."""
        thread_id = _get_ident()
        depth = self._depth.get(thread_id, 0)
        self._depth[thread_id] = 0
        return depth

    def nest_again(self, depth: int) -> None:
        self._depth[_get_ident()] = depth

    def wait_quiet(self, period_s: float, deadline: float) -> bool:
        """Block until no signal has been recorded for `period_s`; False if the deadline came first."""
        with self._changed:
            self._waiting += 1
            try:
                while True:
                    now = time.monotonic()
                    quiet_for = (time.monotonic_ns() - self.last_ns) / 1e9 if self.count else period_s
                    if quiet_for >= period_s:
                        return True
                    if now >= deadline:
                        return False
                    self._changed.wait(min(period_s - quiet_for, deadline - now))
            finally:
                self._waiting -= 1

    def render(self, *, limit: int = 60) -> str:
        """The numbered transcript. Nested calls are indented; threads are named when several occur; what
        was not kept, or is left out for `limit`, is counted where it would be."""
        signals = self.signals()
        if len(signals) > limit:  # keep the first and last rows, and every violation with its context
            keep = {s.seq for s in signals[: limit // 2]} | {s.seq for s in signals[-(limit // 2):]}
            for k, s in enumerate(signals):
                if s.kind == "violation":
                    keep |= {x.seq for x in signals[max(0, k - 3): k + 1]}
            signals = [s for s in signals if s.seq in keep]
        threads = {s.thread_id for s in signals if s.kind not in ("note", "violation")}
        rows: list[str] = []
        previous = 0
        for signal in signals:
            if signal.seq > previous + 1:
                hidden = signal.seq - previous - 1
                rows.append(f"{'':>5}  … {hidden} more signal{'s' * (hidden != 1)} …")
            rows.append(_row(signal, len(threads) > 1))
            previous = signal.seq
        if self.count > previous:
            hidden = self.count - previous
            rows.append(f"{'':>5}  … {hidden} more signal{'s' * (hidden != 1)} …")
        return "\n".join(rows)


def _tape_entry(tape: Tape, entry: tuple) -> tuple:
    seq, arg, thread_id, depth = entry
    return (seq, "on_next", tape.actor, arg, 0, thread_id, depth)


def _seq(entry: Any) -> int:
    return entry.seq if isinstance(entry, Signal) else entry[0]


def _row(signal: Signal, name_threads: bool) -> str:
    text = "  " * signal.depth + escape_controls(signal.call_text())
    if signal.outcome:
        text = f"{text:<34} -> {escape_controls(signal.outcome)}"
    if name_threads and signal.kind not in ("note", "violation"):
        text = f"{text}  [{escape_controls(signal.thread)}]"
    return f"{signal.seq:>5}  {text}"
