"""Evidence for a reproducer: the kit's operations in one check, as data a script can perform again.

The trace is what a reader follows; this is what a program replays (rstck/reports/repro writes the scripts).
It keeps the kit's own operations, each with plain arguments (ints, None, strings, bytes, names of the objects
involved): the factories called, the probes, sources and observers made (with the options that change what
they do), and what the check then did with them in order: subscribe, request, cancel, send a signal, settle,
expect. An operation made from inside a signal a probe received (a reaction) names that signal, by the probe,
the kind and its number among the probe's signals of that kind; one made on a second thread of the kit's names
the operation that started the thread. What the implementation does in answer is not kept: a reproducer
observes it afresh.

An operation the kit makes inside another of its operations (the settle inside `subscribe`) belongs to the
outer one and is not kept on its own. Evidence is bounded: past OPS_KEPT operations, or an argument no script
can write out, it says why no reproducer can be made instead.
"""

from __future__ import annotations

import functools
import importlib
import itertools
import json
import math
import threading
import weakref
from typing import Any, Callable

# The most operations a check's evidence keeps; a check that makes more has no reproducer.
OPS_KEPT = 2000

# What a violation's `claim` says about how a reproducer observes it again (rstck/reports/repro):
MONITOR = {"by": "monitor"}  # a kit end's monitor saw the signal or call that breaks the rule
CALL = {"by": "call"}  # a call into the implementation raised, or did not raise what the rule demands
EXPECTATION = {"by": "expectation"}  # an expect_* operation of a probe found the signal missing
HANG = {"by": "hang"}  # a call into the implementation never returned


class Unexpressible(Exception):
    """An argument a script cannot write out."""


def _ints_as_json(value: int) -> Any:
    return value if abs(value) < 2**53 else {"int": str(value)}


class _Frame:
    """What an operation recorded on one thread is made inside of: a signal (anchor), a kit thread, an
    operation under way (depth)."""

    __slots__ = ("anchor", "thread", "depth", "open", "described")

    def __init__(self, anchor: dict | None, thread: int | None, described: bool = False):
        self.anchor = anchor
        self.thread = thread
        self.depth = 0
        self.open: int | None = None  # the index of the operation under way at depth 1
        self.described = described  # inside a signal whose reaction is described: a script does what it does


class Evidence:
    """The operations of one check, in the order the kit made them.

    What it keeps, it keeps as JSON text: a check that watches CPython hand a freed probe's address to the next
    probe (1.9, subscribers one after another) must not see the evidence take that address first with a small
    object (a dict, a tuple) of a probe's size that it keeps."""

    def __init__(self, trace: Any):
        self._trace = trace
        self._ops: list[str] = []
        self._objects: dict[str, str] = {}  # name -> what it is (a factory's product, a probe ...)
        self.unsupported = ""  # why no reproducer can be made ("" while one can)
        self.target_down = ""  # why the target no longer serves after this check ("" while it does)
        self.settings: dict[str, Any] = {}  # how the adapter passes values (a Node target's demand: number, bigint)
        self._names: dict[int, str] = {}  # id() -> name, valid while the object of _refs[id()] lives
        self._refs: dict[int, Callable[[], Any]] = {}
        self._numbers: dict[str, itertools.count] = {}
        self._local = threading.local()
        self._lock = threading.Lock()
        self._arrivals: dict[tuple[str, str], int] = {}

    # -- naming ---------------------------------------------------------------------------------

    def name(self, obj: Any, prefix: str, **what: Any) -> str:
        """The name `obj` has in the evidence (a new one, `prefix` and a number, on first sight)."""
        with self._lock:
            known = self.known(obj)
            if known is not None:
                return known
            name = f"{prefix}{next(self._numbers.setdefault(prefix, itertools.count(1)))}"
            try:
                ref = weakref.ref(obj)
            except TypeError:
                ref = (lambda o: lambda: o)(obj)
            self._names[id(obj)], self._refs[id(obj)] = name, ref
            self._objects[name] = json.dumps(what)
            return name

    def named(self, obj: Any, name: str, **what: Any) -> None:
        """A kit object (probe#1, source#1, observer#1) under its own name, as the trace shows it."""
        key = name.replace("#", "")
        with self._lock:
            self._names[id(obj)], self._refs[id(obj)] = key, weakref.ref(obj)
            self._objects[key] = json.dumps(what)

    def known(self, obj: Any) -> str | None:
        ref = self._refs.get(id(obj))
        return self._names[id(obj)] if ref is not None and ref() is obj else None

    def value(self, value: Any) -> Any:
        """`value` as a script can write it out; Unexpressible if it cannot."""
        if value is None or isinstance(value, (bool, str)):
            return value
        if isinstance(value, int):
            return _ints_as_json(value)
        if isinstance(value, float):
            return value if math.isfinite(value) else {"float": repr(value)}
        if isinstance(value, (bytes, bytearray)):
            return {"bytes": bytes(value).hex()}
        if isinstance(value, range):
            return {"range": [value.start, value.stop, value.step]}
        if isinstance(value, BaseException):
            return {"error": type(value).__name__, "message": str(value)}
        if isinstance(value, (list, tuple)):
            return {"list": [self.value(v) for v in value]}
        name = self.known(value)
        if name is not None:
            return {"ref": name}
        if type(value).__name__ == "range_iterator":  # elements a check hands out bit by bit: shared, by name
            _, (over,), position = value.__reduce__()
            return {"ref": self.name(value, "elements", kind="iterator", over=self.value(over), position=position)}
        raise Unexpressible(f"an argument of type {type(value).__name__}")

    # -- what adapters and kit objects report ---------------------------------------------------

    def made(self, obj: Any, factory: str, args: tuple, role: str, *, by: Any = None) -> None:
        """A factory of the target made `obj`: an operation of its own (it runs the implementation's code). `by`:
        the factory itself, named when a script can import it by its own name (a class, a module's function)."""
        name = self.name(obj, role, made_by=factory)
        op = {"op": "make", "name": name, "factory": factory, "args": self._values(args)}
        importable = importable_name(by)
        if importable:
            op["importable"] = importable
        self._add(op, always=True)

    def made_here(self, name: str) -> None:
        """Kit object `name` is made at this point of the check, not before it: a script makes it here too (a probe
        that must take the address of an earlier one, let go of)."""
        self._add({"op": "new", "name": name.replace("#", "")})

    def claim(self, kind: str, **fields: Any) -> dict[str, Any] | None:
        """A check's own judgement as a reproducer makes it again (`kind`, over the objects and values in `fields`),
        for the `claim` of the RuleViolation it raises; None when a field cannot be written out."""
        try:
            return {"by": "check", "claim": kind, **{name: self.value(v) for name, v in fields.items()}}
        except Unexpressible:
            return None

    def cannot(self, why: str) -> None:
        """No reproducer can be made of this check: say why (the first reason is kept)."""
        self.unsupported = self.unsupported or why

    def _values(self, args: tuple) -> list[Any]:
        try:
            return [self.value(a) for a in args]
        except Unexpressible as exc:
            self.cannot(f"the kit passed {exc}, which a script cannot write out")
            return []

    # -- frames: where an operation is made -----------------------------------------------------

    def _frames(self) -> list[_Frame]:
        frames = self._local.__dict__.get("frames")
        if frames is None:
            frames = self._local.frames = [_Frame(None, None)]
        return frames

    def enter_signal(self, receiver: str, kind: str, nth: int, *, described: bool = False) -> None:
        """The implementation signals kit object `receiver` (its `nth` signal of `kind`): what the kit does
        before the signal returns is made inside it (`described`: by a reaction the evidence describes, whose
        operations a script makes of itself and which are not kept)."""
        frames = self._frames()
        frames.append(_Frame({"of": receiver.replace("#", ""), "kind": kind, "nth": nth}, frames[-1].thread,
                             described))

    def leave_signal(self) -> None:
        frames = self._frames()
        if len(frames) > 1:
            frames.pop()

    def arrival(self, receiver: str, kind: str) -> int:
        """The number of this signal among `receiver`'s signals of `kind` (counted here: for those a probe's
        fast path takes in, the probe counts)."""
        with self._lock:
            count = self._arrivals[(receiver, kind)] = self._arrivals.get((receiver, kind), 0) + 1
        return count

    def on_thread(self, call: Callable[[], Any]) -> Callable[[], Any]:
        """`call`, to be run on a thread of the kit's that the operation under way starts: what it does is
        recorded as made on that thread."""
        frame = self._frames()[-1]
        tag, described = frame.open, frame.described

        def run() -> Any:
            self._local.frames = [_Frame(None, tag, described)]
            return call()

        return run

    # -- operations -----------------------------------------------------------------------------

    def begin(self, op: dict[str, Any] | None) -> _Frame | None:
        """An operation starts (None: one that is never kept, whose inner operations are not either)."""
        frame = self._frames()[-1]
        frame.depth += 1
        if frame.depth == 1 and op is not None:
            frame.open = self._add(op)
        return frame

    def end(self, frame: _Frame) -> None:
        frame.depth -= 1
        if frame.depth == 0:
            frame.open = None

    def _add(self, op: dict[str, Any], *, always: bool = False) -> int | None:
        frame = self._frames()[-1]
        if (frame.depth > 1 or frame.described) and not always:
            return None
        if frame.anchor is not None:
            op["inside"] = frame.anchor
        if frame.thread is not None:
            op["thread"] = frame.thread
        op["at"] = self._trace.count + 1
        with self._lock:
            if len(self._ops) >= OPS_KEPT:
                self.cannot(f"the check made more than {OPS_KEPT} operations")
                return None
            try:
                self._ops.append(json.dumps(op))
            except (TypeError, ValueError) as exc:  # a describe that let a value through unexpressed
                self.cannot(f"an operation holds what a script cannot write out ({exc})")
                return None
            return len(self._ops) - 1

    def export(self) -> dict[str, Any]:
        if self.unsupported:
            return {"unsupported": self.unsupported}
        exported = {"objects": {name: json.loads(what) for name, what in self._objects.items()},
                    "ops": [json.loads(op) for op in self._ops], "settings": dict(self.settings)}
        if self.target_down:
            exported["target_down"] = self.target_down
        return exported


def importable_name(obj: Any) -> str | None:
    """MODULE:QUALNAME that imports `obj` itself, if any (not a lambda, a closure, or what __main__ defines)."""
    module, qualname = getattr(obj, "__module__", None), getattr(obj, "__qualname__", "")
    if not module or module == "__main__" or not qualname or "<" in qualname:
        return None
    try:
        found = functools.reduce(getattr, qualname.split("."), importlib.import_module(module))
    except Exception:  # noqa: BLE001 - a module that cannot be imported again names nothing a script can import
        return None
    return f"{module}:{qualname}" if found is obj else None


def recorded(kind: str, describe: Callable[..., dict[str, Any] | None], evidence_of: Callable[[Any], Any]):
    """Decorate a kit method as an operation of kind `kind`: `describe(self, *args, **kwargs)` gives its data
    (plain values; names through `evidence.value`), `evidence_of(self)` the check's Evidence."""

    def wrap(method: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(method)
        def run(self: Any, *args: Any, **kwargs: Any) -> Any:
            evidence = evidence_of(self)
            if evidence is None:
                return method(self, *args, **kwargs)
            frame = evidence.begin(_described(evidence, kind, describe, self, args, kwargs))
            try:
                return method(self, *args, **kwargs)
            finally:
                evidence.end(frame)

        return run

    return wrap


def _described(evidence: Evidence, kind: str, describe: Callable[..., dict[str, Any] | None], owner: Any,
               args: tuple, kwargs: dict) -> dict[str, Any] | None:
    if evidence.unsupported:
        return None
    try:
        data = describe(owner, evidence, *args, **kwargs)
    except Unexpressible as exc:
        evidence.cannot(f"the kit passed {exc}, which a script cannot write out")
        return None
    return None if data is None else {"op": kind, **data}
