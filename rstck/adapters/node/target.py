"""NodeTarget: a JavaScript module's Reactive Streams factories, checked through a Node process per check.

The module (CommonJS, or ESM that `require` or `import()` loads) exports any of createPublisher(n),
createFailedPublisher(), createSubscriber(), createWhiteboxSubscriber(observer), createProcessor().
Every check runs unchanged: the probes talk to JavaScript objects through proxies
(rstck.protocols.node.proxies), and JavaScript talks to the probes through the driver's asks. The
profile is JavaScript's: TypeError for null arguments, RangeError for request(n <= 0), matched by the
JavaScript error's name.
"""

from __future__ import annotations

import contextlib
import os
import time
import weakref
from typing import Any

from rstck.adapters.node import NODE_PREFIX
from rstck.core.probes import ProbeObserver
from rstck.core.session import Session
from rstck.core.settle import SettleOutcome, Settler, SettleTimeout
from rstck.core.signals import Trace, show
from rstck.core.target import ErrorNames, Target
from rstck.core.verdict import BadInput, TargetError
from rstck.protocols.node.driver import driver_env, node_executable
from rstck.protocols.node.errors import Abandoned, NoReply, ProcessEnded
from rstck.protocols.node.js_errors import describe_error, stack_frame
from rstck.protocols.node.pool import NodePool
from rstck.protocols.node.process import NodeProcess
from rstck.protocols.node.values import MAX_SAFE_INTEGER

JAVASCRIPT = ErrorNames("javascript", type_error="TypeError", range_error="RangeError")

# The factories a module may export, and the capability each gives.
FACTORIES = {
    "createPublisher": "publisher",
    "createFailedPublisher": "failed_publisher",
    "createSubscriber": "subscriber",
    "createWhiteboxSubscriber": "observer",
    "createProcessor": "processor",
}
# The methods an object must have to be what its factory promises (JavaScript names).
ROLE_METHODS = {
    "publisher": ("subscribe",),
    "subscriber": ("onSubscribe", "onNext", "onError", "onComplete"),
    "processor": ("subscribe", "onSubscribe", "onNext", "onError", "onComplete"),
}
# JavaScript method names of the kit's objects: the Python method each calls, and how many arguments it
# takes (JavaScript may pass more, or fewer: the rest are dropped, the missing ones are undefined).
PYTHON_NAMES = {
    "onSubscribe": ("on_subscribe", 1), "onNext": ("on_next", 1), "onError": ("on_error", 1),
    "onComplete": ("on_complete", 0), "request": ("request", 1), "cancel": ("cancel", 0),
    "subscribe": ("subscribe", 1), "onSubscribeProcessed": ("on_subscribe_processed", 0),
    "onNextProcessed": ("on_next_processed", 1), "onErrorProcessed": ("on_error_processed", 1),
    "onCompleteProcessed": ("on_complete_processed", 0),
}

# How long a module may take to load (top-level code included) before the target is refused.
LOAD_TIMEOUT_S = 10.0
# How long after a settle's deadline the driver may take to say it is not idle, before it counts as stuck.
IDLE_REPLY_GRACE_S = 0.05
# Consecutive heartbeat turns with no event and no pending resource that make the driver idle.
QUIET_TURNS = 3
# How long past its check's deadline a call may wait for the driver when no runner abandons the check.
CALL_GRACE_S = 2.0
# Isolation "reuse": how long a process that served a check may take to go idle before it is retired, and
# how many checks one process serves at most.
REUSE_IDLE_S = 0.2
REUSE_LIMIT = 100
ISOLATIONS = ("check", "reuse")

NOT_OBSERVABLE = {
    "1.3": "a Node process runs JavaScript on one thread, so signals to a subscriber cannot overlap (the "
           "JavaScript spec: implemented by default)",
    "2.7": "a Node process runs JavaScript on one thread, so calls on a subscription cannot overlap (the "
           "JavaScript spec: implemented by default)",
}


class NodeTarget(Target):
    """The factories a JavaScript module exports, each check in a Node process of its own.

    module: the module's path (relative to the working directory).
    demand: how a demand above Number.MAX_SAFE_INTEGER (2**53-1) reaches request(n): "number" (the
        default: the spec's request(n: number); 2**63-1 arrives as 2**63, which a Number cannot tell
        apart) or "bigint" (exact).
    spares: how many processes are started ahead of the checks that will use them (default: 2 with a
        process per check, 1 when processes are reused).
    isolation: "check" (the default: every check gets a process of its own) or "reuse" (a process that
        ends a check idle, with nothing thrown uncaught, serves the next one, after the driver has dropped
        what the kit held and evaluated the module afresh; faster, and what the module changes outside
        itself, in globals or in its dependencies, carries over). $RSTCK_NODE_ISOLATION sets the default.
    node: the `node` executable (default: $RSTCK_NODE, else `node` on PATH).
    env: the processes' environment (default: this one, less DROPPED_ENV).
    load_timeout_s: how long loading the module may take in a fresh process.
    """

    may_serve = frozenset({"publisher", "subscriber", "processor"})

    error_names = JAVASCRIPT
    factories = FACTORIES  # what the module may export, and the capability each gives
    prefix = NODE_PREFIX

    def __init__(self, module: str, *, name: str | None = None, demand: str = "number", spares: int | None = None,
                 isolation: str | None = None, node: str | None = None, env: dict[str, str] | None = None,
                 load_timeout_s: float = LOAD_TIMEOUT_S):
        super().__init__()
        if demand not in ("number", "bigint"):
            raise BadInput(f"NodeTarget: demand must be 'number' or 'bigint', got {demand!r}")
        isolation = isolation or os.environ.get("RSTCK_NODE_ISOLATION") or "check"
        if isolation not in ISOLATIONS:
            raise BadInput(f"NodeTarget: isolation must be one of {', '.join(ISOLATIONS)}, got {isolation!r}")
        self.isolation = isolation
        path = os.path.abspath(module)
        if not os.path.isfile(path):
            raise BadInput(f"target {self.prefix}{module}: no such file {path}")
        self.module = path
        self.name = name or f"{self.prefix}{module}"
        self.loaded_as = self.name
        self.demand = demand
        self.load_timeout_s = load_timeout_s
        if spares is None:
            spares = 2 if isolation == "check" else 1
        self.pool = pool = NodePool(path, node=node or node_executable(), env=driver_env(env), spares=spares)
        weakref.finalize(self, pool.close)  # a target dropped stops the processes it started ahead
        first = self.pool.spawn()
        ready = _ready(first, self.name, self.load_timeout_s, bad=BadInput)
        self.exports = [export for export in ready.get("exports", ()) if export in self.factories]
        if not self.exports:
            first.kill()
            raise BadInput(f"target {self.name}: the module exports none of {', '.join(self.factories)} "
                           f"(it exports {', '.join(ready.get('exports', ())) or 'no function'})")
        self.pool.keep(first)  # the process that said so serves the first check
        self.capabilities = self.offered(ready)

    def offered(self, ready: dict[str, Any]) -> frozenset[str]:
        """The capabilities the module's exports give."""
        offered = {self.factories[name] for name in self.exports}
        if "observer" in offered:
            offered.add("subscriber")
        return frozenset(offered | {"null_arguments"} | ({"identity"} if ready.get("gc") else set()))

    def close(self) -> None:
        """Stop the processes started ahead (each check's own ends with the check)."""
        self.pool.close()

    def not_observable(self, rule: str) -> str | None:
        return NOT_OBSERVABLE.get(rule)

    def call_not_made(self, exc: BaseException, call: str) -> Exception | None:
        """A call made once the process had ended (process.exit() in a callback of the implementation's own, a
        crash between two calls) never reached the implementation: the target's error, not the call's rule."""
        if isinstance(exc, ProcessEnded) and not exc.during_call:
            return TargetError(f"the Node process ended before {call} was made: {exc}")
        return None

    def session_abandoned(self, session: Session) -> None:
        """Stop the check's process at once: the call its thread is stuck in ends, and nothing the check started
        in Node outlives it."""
        settler = session.settler
        if isinstance(settler, NodeSettler):
            settler.abandon()

    def make_settler(self, trace: Trace) -> Settler:
        return NodeSettler(trace, self)

    # -- the factories ---------------------------------------------------------------------------

    def new_publisher(self, session: Session, n: int) -> Any:
        if "createPublisher" not in self.exports:
            return super().new_publisher(session, n)
        return _made(session, "createPublisher", (n,), "publisher")

    def new_failed_publisher(self, session: Session) -> Any:
        if "createFailedPublisher" not in self.exports:
            return super().new_failed_publisher(session)
        return _made(session, "createFailedPublisher", (), "publisher")

    def new_subscriber(self, session: Session) -> Any:
        if "createSubscriber" in self.exports:
            return _made(session, "createSubscriber", (), "subscriber")
        if "createWhiteboxSubscriber" in self.exports:
            return self.new_whitebox_subscriber(session, session.observer())
        return super().new_subscriber(session)

    def new_whitebox_subscriber(self, session: Session, observer: ProbeObserver) -> Any:
        if "createWhiteboxSubscriber" not in self.exports:
            return super().new_whitebox_subscriber(session, observer)
        return _made(session, "createWhiteboxSubscriber", (observer,), "subscriber")

    def new_processor(self, session: Session) -> Any:
        if "createProcessor" not in self.exports:
            return super().new_processor(session)
        return _made(session, "createProcessor", (), "processor")


def _ready(process: NodeProcess, name: str, timeout_s: float, *, bad: type[Exception]) -> dict[str, Any]:
    """The driver's handshake; `bad` (BadInput when loading the target, TargetError in a check) says why the
    module cannot be used."""
    try:
        ready = process.wait_ready(timeout_s)
    except (NoReply, ProcessEnded) as exc:
        process.kill()
        raise bad(f"target {name}: {exc}") from None
    if ready.get("load_error") is not None:
        error = process.thrown(ready["load_error"])
        process.kill()
        raise bad(f"target {name}: loading the module threw {describe_error(error)}")
    return ready


def _made(session: Session, factory: str, args: tuple, role: str) -> Any:
    """Call a factory in the check's process; what it throws or returns instead of a `role` is the
    target's fault (an error verdict), not a rule's."""
    settler = session.settler
    assert isinstance(settler, NodeSettler)
    process = settler.bind(session)
    call = f"{factory}({', '.join(show(a) for a in args)})"
    try:
        with session.calls.underway(call, "", factory):  # a factory that never returns: a target error
            reply = process.command({"op": "create", "factory": factory,
                                     "args": [process.encode(a) for a in args]},
                                    deadline=settler.deadline())
    except (ProcessEnded, NoReply) as exc:
        raise TargetError(f"{call}: {exc}") from None
    if not reply.get("ok"):
        raise TargetError(f"{call} threw {describe_error(process.thrown(reply.get('thrown')))}")
    made = reply.get("ret")
    if not (isinstance(made, dict) and "$ref" in made):
        shown = "undefined" if isinstance(made, dict) and "$undefined" in made else (
            "null" if made is None else show(process.decode(made)))
        raise TargetError(f"{call} returned {shown}: not a {role}")
    missing = [m for m in ROLE_METHODS[role] if m not in made.get("methods", ())]
    if missing:
        raise TargetError(f"{call} returned a {made.get('class') or 'value'} without {', '.join(missing)}: "
                          f"not a {role}")
    proxy = process.proxy(made, role)
    session.evidence.made(proxy, factory, args, role)
    session.evidence.settings["demand"] = settler.target.demand
    return proxy


class NodeSettler(Settler):
    """Settles one check's Node process: the driver reports idle once no event came and no resource was
    pending for QUIET_TURNS turns of its loop. It also holds the check's process: the first factory
    call takes one from the pool; the session gives it back when the check ends (`give_back`), and the
    runner giving the check up stops it (`abandon`)."""

    quiet_reason = "the Node driver reported idle"

    def __init__(self, trace: Trace, target: NodeTarget):
        super().__init__(trace)
        self.target = target
        self.session: Session | None = None
        self.process: NodeProcess | None = None
        self.uncaught: list[str] = []  # the implementation's uncaught errors (not the kit's own), described
        self.collect = False  # whether the next settle asks the driver which kit objects JavaScript dropped
        self.busy = False  # a settle found the process still busy at the deadline
        self.abandoned = False  # the runner gave the check up
        self._demand_noted = False

    def bind(self, session: Session) -> NodeProcess:
        """The check's process, taken from the pool on first use."""
        if self.session is None:
            self.session = session
        if self.process is None:
            process = self.process = self.target.pool.take()
            if self.abandoned:  # given up while it was taken: `abandon` found no process to stop
                process.abandon()
            try:
                _ready(process, self.target.name, self.target.load_timeout_s, bad=TargetError)
            except TargetError:
                self.process = None  # stopped: the next factory call tries another
                raise
            process.demand_as = self.target.demand
            process.handler = self
            session.lifecycle.close_at_end(self.give_back, "the Node process")
            for event in process.early:  # what the module printed as it loaded
                self.event(event)
            process.early.clear()
        return self.process

    # -- what the process asks of its handler ----------------------------------------------------

    def abandon(self) -> None:
        """The runner gave the check up (from its own thread): its process is stopped at once, and a call the
        check's thread waits in ends."""
        self.abandoned = True
        process = self.process
        if process is not None:
            process.abandon()

    def deadline(self) -> float | None:
        """The bound of a call into the process; the runner gives the check up before it, but a session run
        without the runner has only this."""
        session = self.session
        return None if session is None else session.deadline + CALL_GRACE_S

    def answer(self, ask: dict[str, Any]) -> tuple[BaseException | None, bool]:
        """JavaScript called one of the kit's objects: make the call; what it raised goes back to be thrown."""
        process = self.process
        assert process is not None
        name = ask.get("name", "")
        target = process.kit_object(ask.get("obj", ""))
        method, arity = PYTHON_NAMES.get(name, ("", 0))
        if target is None or not callable(getattr(target, method, None)):
            self.trace.note(f"JavaScript called {name} on a kit object it has no method for ({ask.get('obj')})")
            return TypeError(f"{name} is not a function"), False
        role = "subscription" if name == "onSubscribe" else ""
        args = [process.decode(a, role=role) for a in ask.get("args", ())][:arity]
        args += [None] * (arity - len(args))
        # An ask inside no command ran on JavaScript's own schedule, before the driver read the call the kit
        # now waits for: it is taken outside that call, where it happened.
        outside = self.session is not None and ask.get("in_op") is None
        try:
            with self.session.signalling.apart() if outside else contextlib.nullcontext():
                getattr(target, method)(*args)
        except (Abandoned, ProcessEnded):
            raise
        except BaseException as exc:  # noqa: BLE001 - the kit's object raised on purpose (2.13), thrown back
            return exc, self.broken()
        return None, self.broken()

    def event(self, message: dict[str, Any]) -> None:
        session = self.session
        if session is None:
            return
        kind = message.get("ev")
        process = self.process
        assert process is not None
        if kind == "console":
            errors = [process.decode(e) for e in message.get("errors", ())]
            first = next((e for e in errors if isinstance(e, BaseException)), None)
            session.surfacing.report("log", first,
                                     f"console.{message.get('level')}: {_one_line(message.get('text', ''))}")
        elif kind == "uncaught":
            error = process.thrown(message.get("error"))
            rejected = message.get("origin") == "unhandledRejection"
            origin = "an unhandled rejection" if rejected else "an uncaught exception"
            if error is session.surfacing.error:
                session.surfacing.report("loop", error, f"{origin} in Node")
                return
            text = f"{origin}: {describe_error(error)}"
            session.surfacing.report("loop", None, text)
            self.uncaught.append(text)
        elif kind == "exit":
            where = stack_frame(message.get("stack", ""))
            session.trace.note(f"process.exit({message.get('code')}) called{' at ' + where if where else ''}")

    def output(self, stream: str, text: str) -> None:
        if self.session is not None:
            self.trace.note(f"{stream}: {_one_line(text)}")

    def demand_sent(self, args: tuple) -> None:
        """Notes, once per check, what a demand beyond Number.MAX_SAFE_INTEGER becomes in JavaScript."""
        n = args[0] if args else None
        if self._demand_noted or not isinstance(n, int) or isinstance(n, bool) or abs(n) <= MAX_SAFE_INTEGER:
            return
        self._demand_noted = True
        if self.target.demand == "number":
            number = int(float(n))
            self.trace.note(f"request({show(n)}) reaches JavaScript as the Number {number} ({show(number)}): above "
                            f"Number.MAX_SAFE_INTEGER (2**53-1) a Number is not exact")
        else:
            self.trace.note(f"request({show(n)}) reaches JavaScript as the BigInt {n}n")

    def cancel_sent(self) -> None:
        self.collect = True

    # -- settling ----------------------------------------------------------------------------------

    def settle(self, deadline: float) -> SettleOutcome:
        started = time.monotonic()
        process = self.process
        if process is None:
            return SettleOutcome("idle", 0.0)
        if process.ended:
            return self._ended(started)
        session = self.session
        remaining_ms = max(0.0, deadline - time.monotonic()) * 1000
        try:
            reply = process.command({"op": "await_idle", "quiet_turns": QUIET_TURNS, "max_ms": remaining_ms,
                                     "collect": self.collect and "identity" in self.target.capabilities},
                                    deadline=deadline + IDLE_REPLY_GRACE_S)
        except NoReply:
            process.kill(wait=False)
            raise SettleTimeout("the Node process did not answer by the deadline: synchronous JavaScript kept "
                                "running (an endless loop?)") from None
        except ProcessEnded:
            return self._ended(started)
        self.collect = False
        process.released(reply.get("released") or [])
        waited = time.monotonic() - started
        if reply.get("stopped"):
            return SettleOutcome("violation", waited)
        if not reply.get("idle"):
            self.busy = True
            pending = ", ".join(reply.get("pending") or ()) or "nothing the driver can name"
            raise SettleTimeout(f"the Node process was still busy at the deadline (pending: {pending}; "
                                f"{reply.get('turns', 0)} turns watched)")
        if self.uncaught and not (session is not None and session.findings.violations):
            raise TargetError(f"the implementation threw outside any call of the kit's: {self.uncaught[0]}")
        return SettleOutcome("idle", waited)

    def _ended(self, started: float) -> SettleOutcome:
        """The process is gone: a violation seen before decides the verdict, else it is the target's error."""
        assert self.process is not None
        if self.session is not None and self.session.findings.violations:
            return SettleOutcome("violation", time.monotonic() - started)
        raise TargetError(self.process.end_text)

    def give_back(self) -> None:
        """The check is over: its process serves the next check (isolation "reuse") or is stopped."""
        process, self.process = self.process, None
        if process is not None and not self._served_another(process):
            process.kill(wait=False)

    def _served_another(self, process: NodeProcess) -> bool:
        """Isolation "reuse": give the process back for the next check if this one left it clean."""
        session = self.session
        if (self.target.isolation != "reuse" or process.ended or self.uncaught or self.busy or session is None
                or session.lifecycle.sealed or process.served + 1 >= REUSE_LIMIT):
            return False
        # Detached first: what the implementation still does now is not this check's to judge (with a process
        # per check it would not be seen at all), and the next check must not see it either.
        process.handler = None
        end = time.monotonic() + REUSE_IDLE_S
        try:
            reply = process.command({"op": "await_idle", "quiet_turns": QUIET_TURNS, "max_ms": REUSE_IDLE_S * 1000},
                                    deadline=end + IDLE_REPLY_GRACE_S)
        except (NoReply, ProcessEnded, Abandoned):
            return False
        uncaught = any(event.get("ev") in ("uncaught", "exit") for event in process.early)
        if not reply.get("idle") or uncaught or not process.reset(end + 1.0):
            return False
        self.target.pool.keep(process)
        return True


def _one_line(text: str) -> str:
    lines = text.strip().splitlines() or [""]
    return lines[0][:300] + (f" (+{len(lines) - 1} lines)" if len(lines) > 1 else "")
