"""The Python end of the Node bridge: one `node driver.js` process, its channels, its codec, and the pool.

A `NodeProcess` is one driver (rstck/protocols/node/driver.js) with the implementation's module loaded.
Commands go as NDJSON to its stdin, or, while JavaScript waits inside a call to one of the kit's objects
(an `ask`), to the nested descriptor it reads synchronously; events and replies come back on a
descriptor of their own, so what the implementation prints never reaches the protocol. Whatever it
writes to stdout or stderr is read beside the events and shown in the trace.

A `NodePool` keeps the next process started while a check runs, so that a check seldom waits for Node
to boot: each check gets a process of its own (docs/node.md, "Processes").
"""

from __future__ import annotations

import atexit
import collections
import concurrent.futures
import dataclasses
import itertools
import json
import math
import os
import select
import shutil
import subprocess
import sys
import threading
import time
import weakref
from typing import Any, Callable

from rstck.core.verdict import BadInput

DRIVER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "driver.js")

# How long a module may take to load (top-level code included) before the target is refused.
LOAD_TIMEOUT_S = 10.0
# How often a wait looks whether its check was abandoned (select wakes at once when data arrives).
TICK_S = 0.05
# How long after a settle's deadline the driver may take to say it is not idle, before it counts as stuck.
IDLE_REPLY_GRACE_S = 0.05
# The environment a driver does not inherit: NODE_EXTRA_CA_CERTS makes every Node start parse the
# certificate bundle before V8 starts (about 130 ms on a 2-core machine), and no in-memory stream needs it.
DROPPED_ENV = ("NODE_EXTRA_CA_CERTS",)
MAX_SAFE_INTEGER = 2**53 - 1
# The most of one stream (stdout or stderr) a process keeps for the trace.
OUTPUT_KEPT = 4000


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


def node_executable() -> str:
    """The `node` to run: $RSTCK_NODE, else the first on PATH; NodeMissing says what to do."""
    if sys.platform == "win32":
        raise NodeMissing("the Node adapter needs a POSIX system: it hands the driver descriptors of its own")
    chosen = os.environ.get("RSTCK_NODE") or shutil.which("node")
    if not chosen:
        raise NodeMissing("node: not found on PATH; install Node.js 16.14 or later, or set RSTCK_NODE to its path")
    return chosen


def driver_env(base: dict[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ if base is None else base)
    for name in DROPPED_ENV:
        env.pop(name, None)
    return env


# -- values ---------------------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class JSValue:
    """A JavaScript value the bridge does not copy (a class instance, a function, a symbol): its kind."""

    kind: str
    text: str = ""

    def __repr__(self) -> str:
        return f"<{self.kind}{' ' + self.text if self.text else ''}>"


class JavaScriptError(Exception):
    """An error thrown or signalled by JavaScript code. Each JavaScript error class becomes a subclass named
    like it (RangeError, TypeError, a user's class), so a profile matches it by name; `js_stack` keeps the
    first frames of its stack."""

    js_stack = ""


class JavaScriptThrow(JavaScriptError):
    """JavaScript threw a value that is not an Error (`throw "text"`)."""


_ERROR_CLASSES: dict[tuple[str, ...], type[JavaScriptError]] = {}
_ERROR_LOCK = threading.Lock()


def error_class(chain: tuple[str, ...]) -> type[JavaScriptError]:
    """The Python class standing for a JavaScript error whose name and prototype chain are `chain`, most
    specific first: ("RangeError", "Error") gives RangeError(Error(JavaScriptError))."""
    chain = tuple(name for name in chain if name.isidentifier()) or ("Error",)
    with _ERROR_LOCK:
        known = _ERROR_CLASSES.get(chain)
        if known is not None:
            return known
        base: type[JavaScriptError] = JavaScriptError
        for k in range(len(chain) - 1, -1, -1):
            key = chain[k:]
            cls = _ERROR_CLASSES.get(key)
            if cls is None:
                cls = type(chain[k], (base,), {"__module__": "javascript", "__qualname__": chain[k]})
                _ERROR_CLASSES[key] = cls
            base = cls
        return base


def stack_frame(stack: str, *, skip_driver: bool = True) -> str:
    """Where a JavaScript stack points into the implementation: the first frame outside Node's internals
    and the driver, as file:line:column (relative to the working directory when below it)."""
    lines = stack.splitlines()
    if lines and not lines[0].startswith("    at ") and _looks_like_location(lines[0]):
        return _shorter(lines[0])  # a SyntaxError's stack starts with file:line
    for line in lines:
        line = line.strip()
        if not line.startswith("at "):
            continue
        location = line[3:]
        if location.endswith(")") and "(" in location:
            location = location[location.rindex("(") + 1:-1]
        if location.startswith(("node:", "internal/")) or (skip_driver and location.startswith(DRIVER)):
            continue
        return _shorter(location)
    return ""


def _looks_like_location(text: str) -> bool:
    head, _, line = text.rpartition(":")
    return bool(head) and line.isdigit() and (os.sep in head or head.endswith((".js", ".cjs", ".mjs")))


def _shorter(location: str) -> str:
    location = location.removeprefix("file://")
    cwd = os.getcwd() + os.sep
    return location[len(cwd):] if location.startswith(cwd) else location


def describe_error(error: BaseException) -> str:
    """One line: the error's class and message, and where its stack points into the implementation."""
    message = str(error).splitlines()[0] if str(error) else ""
    where = stack_frame(getattr(error, "js_stack", "") or "")
    text = f"{type(error).__name__}({message[:200]!r})"
    return f"{text} at {where}" if where else text


# -- one process -------------------------------------------------------------------------------------

class NodeProcess:
    """One driver process and the protocol spoken with it. Thread-safe: a lock keeps one exchange at a
    time, re-entered by the thread that answers an ask (its nested commands)."""

    def __init__(self, module: str, *, node: str, env: dict[str, str]):
        self.module = module
        events_r, events_w = os.pipe()
        nested_r, nested_w = os.pipe()
        child_env = dict(env, RSTCK_EVENTS_FD=str(events_w), RSTCK_NESTED_FD=str(nested_r))
        try:
            self.popen = start_process([node, DRIVER, module], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                       stderr=subprocess.PIPE, pass_fds=(events_w, nested_r), env=child_env)
        except OSError as exc:
            for fd in (events_r, events_w, nested_r, nested_w):
                os.close(fd)
            raise NodeMissing(f"{node}: cannot start it ({exc.strerror or exc})") from None
        os.close(events_w)  # the child's ends: the parent keeps only its own, so an ending child shows as EOF
        os.close(nested_r)
        self.pid = self.popen.pid
        _LIVE[self.pid] = self
        self._events = events_r
        self._nested = nested_w
        self._stdin = self.popen.stdin.fileno()  # type: ignore[union-attr]
        self._outputs = {self.popen.stdout.fileno(): "stdout",  # type: ignore[union-attr]
                         self.popen.stderr.fileno(): "stderr"}  # type: ignore[union-attr]
        for fd in (self._events, *self._outputs):
            os.set_blocking(fd, False)
        self._poll = select.poll()
        for fd in (self._events, *self._outputs):
            self._poll.register(fd, select.POLLIN | select.POLLHUP)
        self._buffer = b""
        self._partial: dict[str, bytes] = {"stdout": b"", "stderr": b""}
        self._messages: collections.deque[dict[str, Any]] = collections.deque()
        self._ids = itertools.count(1)
        self._lock = threading.RLock()
        self._asks: list[int] = []  # asks being answered, innermost last
        self.ended = False
        self.stopped_by_kit = False
        self.end_text = ""  # how it ended, once it has
        self.exit_stack = ""  # the stack of a process.exit() call
        self.exit_in_op: int | None = None  # the command it was called in
        self.exit_code: Any = None
        self.ready: dict[str, Any] | None = None
        self.handler: Any = None  # what answers asks and takes events (the check's settler)
        self.early: list[dict[str, Any]] = []  # events before a handler was bound
        self.output: dict[str, str] = {"stdout": "", "stderr": ""}
        self.release: list[str] = []  # handles of proxies Python dropped, sent with the next command
        self._kit: dict[str, Any] = HeldByJavaScript()
        self._kit_ids: dict[int, tuple[str, Callable[[], Any]]] = {}
        self._kit_count = itertools.count(1)
        self._proxies: weakref.WeakValueDictionary[str, Any] = weakref.WeakValueDictionary()
        self.demand_as = "number"
        self.served = 0  # checks this process has served (isolation "reuse")

    def __repr__(self) -> str:
        return f"<NodeProcess pid {self.pid}{' ended' if self.ended else ''}>"

    # -- the handshake ---------------------------------------------------------------------------

    def wait_ready(self, timeout_s: float) -> dict[str, Any]:
        """The driver's `ready` event (the node version, the module's exported functions, a load error)."""
        if self.ready is not None:
            return self.ready
        with self._lock:
            if self.ended:
                raise ProcessEnded(self.end_text)
            end = time.monotonic() + timeout_s
            while self.ready is None:
                message = self._next(end, None)
                if message is None:
                    self.kill()
                    raise NoReply(f"the module did not finish loading within {timeout_s:g} s (an endless loop at load "
                                  "time?)")
                self._take(message)
            return self.ready

    # -- commands ----------------------------------------------------------------------------------

    def command(self, fields: dict[str, Any], *, deadline: float,
                interrupted: Callable[[], bool] | None = None,
                numbered: Callable[[int], None] | None = None) -> dict[str, Any]:
        """Send a command and return its reply, answering the asks that come meanwhile. NoReply if none came
        by `deadline` (None: no bound), Abandoned once `interrupted()` says so, ProcessEnded if it ended.
        `numbered` learns the command's id before any event of it can arrive."""
        with self._lock:
            if self.ended:
                if self.stopped_by_kit:
                    raise Abandoned("the check is over: the kit has stopped its process")
                raise ProcessEnded(self.end_text)
            number = next(self._ids)
            fields["id"] = number
            if numbered is not None:
                numbered(number)
            if self.release:
                fields["release"], self.release = self.release, []
            sent = self._send(self._nested if self._asks else self._stdin, fields)
            while True:
                try:
                    message = self._next(deadline, interrupted)
                except ProcessEnded:
                    # Inside this call if it got there and process.exit() was called in it (or in a call nested
                    # in it); a crash without process.exit() is charged to the call under way.
                    during = sent and (self.exit_in_op is not None and self.exit_in_op >= number
                                       if self.exit_stack else True)
                    raise ProcessEnded(self.end_text, during_call=during) from None
                if message is None:
                    raise NoReply(f"the Node process did not answer {fields['op']} by the deadline")
                if message.get("re") == number:
                    return message
                if "re" not in message:
                    self._take(message)

    def call(self, handle: str, method: str, args: tuple, *, demand: bool = False) -> Any:
        """Call `method` on the JavaScript object `handle`: what it returned, decoded, or what it threw, raised."""
        deadline, interrupted = self.handler.bounds() if self.handler is not None else (None, None)
        if self.handler is not None:
            if demand:
                self.handler.demand_sent(args)
            if method == "cancel":
                self.handler.cancel_sent()
        try:
            reply = self.command({"op": "call", "target": handle, "method": method,
                                  "args": [self.encode(a, demand=demand) for a in args]},
                                 deadline=deadline, interrupted=interrupted)
        except NoReply:
            self.kill(wait=False)  # it runs code that never returns: no later call could be answered either
            raise
        if reply.get("ok"):
            return self.decode(reply.get("ret"))
        raise self.thrown(reply.get("thrown"))

    def _send(self, fd: int, fields: dict[str, Any]) -> bool:
        """Write a line to the driver; False if it is gone (what it said before ending is read still)."""
        data = (json.dumps(fields, separators=(",", ":")) + "\n").encode("utf-8")
        try:
            while data:
                written = os.write(fd, data)
                data = data[written:]
        except OSError:
            self._ended_now()
            return False
        return True

    def _take(self, message: dict[str, Any]) -> None:
        kind = message.get("ev")
        if kind == "ask":
            self._answer(message)
        elif kind == "ready":
            self.ready = message
        else:
            if self.handler is not None:
                self.handler.event(message)
            else:
                self.early.append(message)

    def _answer(self, ask: dict[str, Any]) -> None:
        self._asks.append(ask["ask"])
        try:
            thrown, abort = (None, False) if self.handler is None else self.handler.answer(ask)
        finally:
            self._asks.pop()
        answer: dict[str, Any] = {"op": "answer", "ask": ask["ask"]}
        if thrown is not None:
            answer["thrown"] = self.encode(thrown)
        if abort:
            answer["abort_idle"] = True
        self._send(self._nested, answer)

    def reset(self, deadline: float) -> bool:
        """Make the process fit to serve another check (isolation "reuse"): the driver drops what the kit
        held and evaluates the module afresh; False if it could not (then the process is stopped)."""
        self.handler = None
        self.early.clear()  # what the module prints as it is evaluated afresh is the next check's to see
        try:
            reply = self.command({"op": "reset"}, deadline=deadline)
        except (NoReply, ProcessEnded, Abandoned):
            self.kill(wait=False)
            return False
        if not (reply.get("ok") and reply.get("reloaded")):
            self.kill(wait=False)
            return False
        self._kit.clear()
        self._kit_ids.clear()
        self._proxies = weakref.WeakValueDictionary()
        self.release = []
        self.output = {"stdout": "", "stderr": ""}
        self.exit_stack, self.exit_in_op = "", None
        self.served += 1
        return True

    # -- reading -----------------------------------------------------------------------------------

    def _next(self, deadline: float | None, interrupted: Callable[[], bool] | None) -> dict[str, Any] | None:
        """The next message from the driver; None at the deadline."""
        while not self._messages:
            if interrupted is not None and interrupted():
                self.kill()
                raise Abandoned("the check was abandoned")
            if self.ended:
                raise ProcessEnded(self.end_text)
            wait = TICK_S if deadline is None else min(TICK_S, deadline - time.monotonic())
            if wait <= 0:
                return None
            for fd, _ in self._poll.poll(wait * 1000):
                if self.ended:
                    break
                if fd == self._events:
                    self._read_events()
                else:
                    self._read_output(fd)
        message = self._messages.popleft()
        if interrupted is not None and interrupted():
            self.kill()
            raise Abandoned("the check was abandoned")
        return message

    def _read_events(self) -> None:
        if not self._read_event_chunk():
            self._ended_now()

    def _read_event_chunk(self) -> bool:
        """Take in what the event channel holds now; False at its end (the process has ended)."""
        try:
            chunk = os.read(self._events, 1 << 16)
        except BlockingIOError:
            return True
        except OSError:
            return False
        if not chunk:
            return False
        self._buffer += chunk
        *lines, self._buffer = self._buffer.split(b"\n")
        for line in lines:
            if line:
                try:
                    message = json.loads(line)
                except ValueError:  # not the driver's: something in the process wrote to its descriptor
                    message = {"ev": "console", "level": "written to the event channel",
                               "text": line.decode("utf-8", "replace")}
                if message.get("ev") == "exit":  # known before the end is: the end says where it came from
                    self.exit_stack, self.exit_in_op = message.get("stack", ""), message.get("in_op")
                    self.exit_code = message.get("code")
                self._messages.append(message)
        return True

    def _read_output(self, fd: int) -> None:
        stream = self._outputs[fd]
        try:
            chunk = os.read(fd, 1 << 16)
        except BlockingIOError:
            return
        if not chunk:
            self._poll.unregister(fd)
            return
        data = self._partial[stream] + chunk
        *lines, self._partial[stream] = data.split(b"\n")
        for line in lines:
            text = line.decode("utf-8", "replace")
            if len(self.output[stream]) < OUTPUT_KEPT:
                self.output[stream] += text[:OUTPUT_KEPT] + "\n"
            if self.handler is not None:
                self.handler.output(stream, text)

    def _ended_now(self) -> None:
        if self.ended:
            return
        try:
            code = self.popen.wait(1.0)
        except subprocess.TimeoutExpired:
            code = None
        if self._events >= 0:  # what it said before it ended (an exit event, notes) is still read
            for _ in range(64):
                count = len(self._messages)
                if not self._read_event_chunk() or len(self._messages) == count:
                    break
        for fd in list(self._outputs):  # what it printed last says why, often
            try:
                while True:
                    chunk = os.read(fd, 1 << 16)
                    if not chunk:
                        break
                    self._partial[self._outputs[fd]] += chunk
            except (BlockingIOError, OSError):
                pass
        for stream, rest in self._partial.items():
            if rest:
                self.output[stream] += rest.decode("utf-8", "replace")[:OUTPUT_KEPT]
                self._partial[stream] = b""
        self.ended = True
        self.end_text = self._ending(code)
        self._close_fds()
        if code is not None:
            _LIVE.pop(self.pid, None)
        else:
            _DYING.append(self)

    def _ending(self, code: int | None) -> str:
        if self.exit_stack:
            where = stack_frame(self.exit_stack)
            return f"process.exit({self.exit_code}){' at ' + where if where else ''}"
        if code is not None and code < 0:
            import signal

            try:
                how = f"killed by {signal.Signals(-code).name}"
            except ValueError:
                how = f"killed by signal {-code}"
        else:
            how = f"exit {code}"
        last = self.output["stderr"].strip().splitlines()[-1:] or [""]
        return f"the Node process ended ({how}){': ' + last[0][:200] if last[0] else ''}"

    # -- ending ------------------------------------------------------------------------------------

    def kill(self, *, wait: bool = True) -> None:
        """Stop the process now (SIGKILL); reap it now, or (`wait=False`) the next time the pool looks."""
        if self.ended:
            return
        try:
            self.popen.kill()
        except OSError:
            pass
        self.ended = self.stopped_by_kit = True
        self.end_text = self.end_text or "the Node process was stopped by the kit"
        self._close_fds()
        if wait:
            _reap(self, 5.0)
        else:
            _DYING.append(self)

    def _close_fds(self) -> None:
        for fd in (self._events, self._nested):
            try:
                os.close(fd)
            except OSError:
                pass
        self._events = self._nested = -1
        for stream in (self.popen.stdin, self.popen.stdout, self.popen.stderr):
            try:
                stream.close()  # type: ignore[union-attr]
            except OSError:
                pass

    # -- the codec ---------------------------------------------------------------------------------

    def encode(self, value: Any, *, demand: bool = False) -> Any:
        """A Python value as the driver decodes it. Ints beyond Number.MAX_SAFE_INTEGER travel as text, and
        become a Number (a demand, by default: docs/node.md) or a BigInt."""
        if value is None or isinstance(value, (bool, str)):
            return value
        if isinstance(value, int):
            if -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER:
                return value
            return {"$bigint": str(value), "as": self.demand_as if demand else "bigint"}
        if isinstance(value, float):
            if math.isfinite(value):
                return value
            return {"$number": "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")}
        if isinstance(value, (bytes, bytearray, memoryview)):
            import base64

            return {"$b64": base64.b64encode(bytes(value)).decode("ascii")}
        handle = getattr(value, "_js_handle", None)
        if handle is not None and getattr(value, "_js_process", None) is self:
            return {"$ref": handle}
        if isinstance(value, (list, tuple)):
            return [self.encode(v) for v in value]
        if isinstance(value, dict) and all(isinstance(k, str) for k in value):
            return {k: self.encode(v) for k, v in value.items()}
        return self._kit_spec(value)

    def _kit_spec(self, value: Any) -> dict[str, Any]:
        """The kit's own object (a probe, a subscription it hands out, an error it signals), held here for
        as long as JavaScript may call it."""
        known = self._kit_ids.get(id(value))
        if known is not None and known[1]() is value and known[0] in self._kit:
            kit = known[0]
        else:
            kit = f"k{next(self._kit_count)}"
            try:
                ref: Callable[[], Any] = weakref.ref(value)
            except TypeError:
                ref = (lambda o: lambda: o)(value)
            self._kit_ids[id(value)] = (kit, ref)
            self._kit[kit] = value
        spec: dict[str, Any] = {"$kit": kit, "role": kit_role(value), "label": getattr(value, "name", "") or kit}
        if isinstance(value, BaseException):
            spec.update(name=type(value).__name__, message=str(value))
        return spec

    def kit_object(self, kit: str) -> Any:
        return self._kit.get(kit)

    def released(self, kits: list[str]) -> None:
        """JavaScript no longer references these kit objects (its collector found them unreachable)."""
        for kit in kits:
            value = self._kit.pop(kit, None)
            if value is not None:
                known = self._kit_ids.get(id(value))
                if known is not None and known[0] == kit:
                    del self._kit_ids[id(value)]

    def decode(self, value: Any, *, role: str = "") -> Any:
        if isinstance(value, list):
            return [self.decode(v) for v in value]
        if not isinstance(value, dict):
            return value
        if "$undefined" in value:
            return None
        if "$number" in value:
            return float(value["$number"].replace("Infinity", "inf"))
        if "$bigint" in value:
            return int(value["$bigint"])
        if "$b64" in value:
            import base64

            return base64.b64decode(value["$b64"])
        if "$error" in value:
            return self.error(value)
        if "$kit" in value:
            return self._kit.get(value["$kit"])
        if "$ref" in value:
            return self.proxy(value, role)
        if "$object" in value:
            return JSValue(value["$object"], value.get("text", ""))
        return {k: self.decode(v) for k, v in value.items()}

    def error(self, spec: dict[str, Any]) -> BaseException:
        cls = error_class(tuple(spec.get("chain") or (spec.get("$error") or "Error",)))
        error = cls(spec.get("message", ""))
        error.js_stack = spec.get("stack", "")
        return error

    def thrown(self, spec: Any) -> BaseException:
        """What JavaScript threw, as a Python exception (a non-Error value wrapped)."""
        value = self.decode(spec)
        if isinstance(value, BaseException):
            return value
        return JavaScriptThrow(f"threw a non-Error value: {value!r}"[:200])

    def proxy(self, spec: dict[str, Any], role: str = "") -> Any:
        from rstck.adapters.node.proxies import fitted, proxy_class

        handle = spec["$ref"]
        known = self._proxies.get(handle)
        if known is not None:
            return fitted(known, role, spec.get("methods", ()))  # one object may play several roles
        made = proxy_class(role, spec.get("methods", ()))(self, handle, spec.get("class", ""))
        self._proxies[handle] = made
        weakref.finalize(made, self.release.append, handle)
        return made


class HeldByJavaScript(dict):
    """The kit's objects the JavaScript side may still call, by kit id: a Python object stays here until
    the driver's collector finds JavaScript no longer references it (3.13 reads this name)."""


def kit_role(value: Any) -> str:
    if isinstance(value, BaseException):
        return "error"
    if callable(getattr(value, "on_next_processed", None)):
        return "observer"
    if callable(getattr(value, "on_subscribe", None)) or callable(getattr(value, "on_next", None)):
        return "subscriber"
    if callable(getattr(value, "request", None)):
        return "subscription"
    if callable(getattr(value, "subscribe", None)):
        return "publisher"
    return "object"


# -- starting processes ------------------------------------------------------------------------------

# A driver stuck in an endless loop never reads the EOF its stdin shows when the kit dies, so each driver gets
# a parent-death signal (`setpriv --pdeathsig KILL`): a kit killed with SIGKILL takes its drivers with it.
# Linux sends that signal when the *thread* that forked the child ends, so every driver is started from one
# thread that lives as long as the kit.
_SETPRIV = shutil.which("setpriv") if sys.platform.startswith("linux") else None
_spawner: concurrent.futures.ThreadPoolExecutor | None = None
_spawner_lock = threading.Lock()


def _spawner_thread() -> concurrent.futures.ThreadPoolExecutor:
    global _spawner
    with _spawner_lock:
        if _spawner is None:
            from rstck.core.kit_threads import mark_kit_thread

            _spawner = concurrent.futures.ThreadPoolExecutor(1, "rstck-node-spawner", initializer=mark_kit_thread)
        return _spawner


def start_process(argv: list[str], **popen_options: Any) -> subprocess.Popen:
    """`subprocess.Popen(argv)`, tied to the kit's life where Linux allows it."""
    if _SETPRIV is None:
        return subprocess.Popen(argv, **popen_options)
    if shutil.which(argv[0]) is None:  # said as Popen would, not by setpriv's exit status
        raise FileNotFoundError(2, "No such file or directory", argv[0])
    return _spawner_thread().submit(subprocess.Popen, [_SETPRIV, "--pdeathsig", "KILL", *argv],
                                    **popen_options).result()


# -- the pool ----------------------------------------------------------------------------------------

# Every driver process not yet reaped, by pid (the kit's own tests assert that none is left), and those
# stopped but not yet reaped.
_LIVE: dict[int, NodeProcess] = {}
_DYING: list[NodeProcess] = []
_SPAWNED: list[int] = []


def _reap(process: NodeProcess, timeout_s: float | None) -> bool:
    try:
        if timeout_s is None:
            if process.popen.poll() is None:
                return False
        else:
            process.popen.wait(timeout_s)
    except subprocess.TimeoutExpired:
        return False
    _LIVE.pop(process.pid, None)
    return True


def reap(timeout_s: float = 0.0) -> None:
    """Reap the stopped processes (waiting up to `timeout_s` for each)."""
    for process in list(_DYING):
        if _reap(process, timeout_s or None):
            try:
                _DYING.remove(process)
            except ValueError:
                pass


def live_pids() -> set[int]:
    """The driver processes not yet reaped."""
    return set(_LIVE)


def spawned_pids() -> list[int]:
    """The pids of every driver process this Python process started."""
    return list(_SPAWNED)


class NodePool:
    """Driver processes for one module: one per check, the next `spares` started ahead on a thread of the
    pool's own, so that neither starting one nor waiting for Node to boot is on a check's path."""

    def __init__(self, module: str, *, node: str, env: dict[str, str], spares: int = 2):
        self.module = module
        self.node = node
        self.env = env
        self.spares = spares
        self._ready: collections.deque[NodeProcess] = collections.deque()
        self._changed = threading.Condition()
        self.closed = False
        self._thread: threading.Thread | None = None
        _POOLS.add(self)

    def spawn(self) -> NodeProcess:
        reap()
        process = NodeProcess(self.module, node=self.node, env=self.env)
        _SPAWNED.append(process.pid)
        return process

    def take(self) -> NodeProcess:
        """A process that has loaded the module (or is loading it) and serves nobody yet; the next one
        starts meanwhile."""
        with self._changed:
            if self.closed:
                raise ProcessEnded("the target was closed")
            process = self._ready.popleft() if self._ready else None
            self._start_thread()
            self._changed.notify_all()
        return process if process is not None else self.spawn()

    def keep(self, process: NodeProcess) -> None:
        """Put a process first in line: the one that was asked what the module exports, or one that served a
        check and was reset (isolation "reuse")."""
        with self._changed:
            if self.closed:
                process.kill(wait=False)
                return
            self._ready.appendleft(process)

    def _start_thread(self) -> None:
        if self._thread is None:
            from rstck.core.kit_threads import mark_kit_thread

            self._thread = threading.Thread(target=self._keep_spares, name="rstck-node-pool", daemon=True)
            mark_kit_thread(self._thread)  # never a thread of the implementation's, for settling
            self._thread.start()

    def _keep_spares(self) -> None:
        while True:
            with self._changed:
                while not self.closed and len(self._ready) >= self.spares:
                    self._changed.wait()
                if self.closed:
                    return
            try:
                process = self.spawn()
            except BaseException:  # noqa: BLE001 - `node` cannot start: the next check's own spawn says why
                return
            with self._changed:
                if self.closed:
                    process.kill(wait=False)
                    return
                self._ready.append(process)

    def close(self) -> None:
        with self._changed:
            self.closed = True
            spares, self._ready = list(self._ready), collections.deque()
            self._changed.notify_all()
        for process in spares:
            process.kill(wait=False)


_POOLS: weakref.WeakSet[NodePool] = weakref.WeakSet()


def pools() -> list[NodePool]:
    """Every pool alive (a target's; the kit's tests close those a test made)."""
    return list(_POOLS)


@atexit.register
def _stop_everything() -> None:
    for pool in list(_POOLS):
        pool.close()
    for process in list(_LIVE.values()):
        process.kill(wait=False)
    reap(1.0)



def _after_fork_in_child() -> None:
    """A forked child does not own its parent's processes: it forgets them (and their descriptors)."""
    for process in list(_LIVE.values()):
        process.ended = True
        process.end_text = "the Node process belongs to the parent process"
        process._close_fds()
        process.popen.returncode = 0  # not this process's child: never waited for here
    _LIVE.clear()
    _DYING.clear()
    global _spawner, _spawner_lock
    _spawner, _spawner_lock = None, threading.Lock()  # its thread is the parent's
    for pool in list(_POOLS):
        pool._ready.clear()
        pool._thread = None
        pool._changed = threading.Condition()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
