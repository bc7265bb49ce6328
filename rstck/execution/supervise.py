"""`rstck check` in a supervised worker process: the kit survives its target.

The command's own process (the supervisor) never imports the target. A worker process loads it,
plans the checks and runs them one by one, telling the supervisor what it begins and what each
check found; the supervisor writes each result row as it arrives. If the worker dies (the target
calls `os._exit`, a C extension crashes, the OOM killer), the check it was running gets an error
row naming the call it was in, and the remaining checks run in a fresh worker. A check abandoned at
its deadline that left threads busy makes the worker ask to be replaced, so that nothing it left
slows down or grows the memory of later checks. A worker ends with `os._exit` once it has said
everything, so threads the target leaves behind cannot keep the run from ending.

On Linux the worker is forked from the supervisor (which has imported little and runs no thread),
so a normal run pays a few tens of milliseconds for it; elsewhere it is spawned.

The pytest plugin's checks run in a CheckWorker: one forked worker that runs checks as pytest asks for
them, under the same supervision (the same error rows, the same replacement after a death).
"""

from __future__ import annotations

import dataclasses
import itertools
import mmap
import multiprocessing
import os
import signal
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Callable, Iterator
from typing import Any

STATUS_BYTES = 512


def runs_in_process(requested: bool) -> bool:
    """Whether the pytest route runs its checks and fuzz shards in pytest's own process: when asked to (for a
    debugger), or where no worker can be forked to share the collected targets' memory (outside Linux)."""
    return requested or not sys.platform.startswith("linux")


def watchdog_s(timeout_s: float) -> float:
    """How long after a check began the supervisor waits for its result before it stops the worker. The
    worker's own runner gives up on a check at its deadline and a grace; this is only for a worker that
    cannot run Python any more (a C extension holding the interpreter)."""
    return 2 * timeout_s + 10.0


@dataclasses.dataclass(frozen=True)
class CheckRun:
    """What a worker is asked to do. Plain data: it crosses into the worker process."""

    target_spec: str
    rules: str | None
    timeout_s: float
    fuzz_examples: int  # 0: no fuzz phase
    stream_length: int = 0  # the stress mode (--stream-length)
    start: int = 0  # the index, in the plan, of the first check to run
    list_only: bool = False
    known_hangs: tuple[tuple[str, str], ...] = ()
    status_path: str = ""
    profile: str = "default"  # which catalogues' checks run (--profile; rstck/rules/catalog)


class CallStatus:
    """A few hundred bytes of shared memory where the worker keeps the call it is in: all that is left
    to read when the target kills the process."""

    def __init__(self, path: str):
        self._file = open(path, "r+b")  # noqa: SIM115 - lives as long as the process that maps it
        self._map = mmap.mmap(self._file.fileno(), STATUS_BYTES)

    def write(self, text: str) -> None:
        data = text.encode("utf-8", "replace")[:STATUS_BYTES - 1]
        self._map[:len(data) + 1] = data + b"\0"

    def read(self) -> str:
        return self._map[:STATUS_BYTES].split(b"\0", 1)[0].decode("utf-8", "replace")


def new_status_file() -> str:
    handle, path = tempfile.mkstemp(prefix="rstck-status-")
    os.write(handle, b"\0" * STATUS_BYTES)
    os.close(handle)
    return path


def run_events(run: CheckRun, status: CallStatus | None = None) -> Iterator[tuple]:
    """What running `run` produces, in order: ("plan", info), then per check ("begin", index) and
    ("result", index, row, leftovers, known hangs), possibly ("restart", next index, why), then ("fuzz",
    rows, summaries) and ("done",). Bad input ends it with ("bad_input", message). Shared by the worker
    process and the in-process route."""
    from rstck.core import calls as calls_module
    from rstck.execution.plan import plan, unserved
    from rstck.execution.runner import run_check
    from rstck.core.target import load_target
    from rstck.core.verdict import BadInput

    try:
        target = load_target(run.target_spec)
        target.stream_length = run.stream_length
        planned = plan(target, rules=run.rules, profile=run.profile)
        if not planned:
            offered = ", ".join(sorted(target.capabilities & {"publisher", "subscriber", "processor"})) or "nothing"
            raise BadInput(f"no check to run: the selection {run.rules or 'all'} has none for what the target "
                           f"offers ({offered})")
    except BadInput as exc:
        yield ("bad_input", str(exc))
        return
    yield ("plan", {"target": target.name, "skipped": unserved(target, rules=run.rules, profile=run.profile),
                    "checks": [_planned_info(p) for p in planned]})
    if run.list_only:
        yield ("done",)
        return
    target.known_hangs.update(run.known_hangs)
    try:
        target.prepare()  # before the first check: no check's deadline, nor the supervisor's watchdog, runs yet
    except BadInput as exc:
        yield ("bad_input", str(exc))
        return
    if status is not None:
        calls_module.CALL_STATUS = status.write
    for index in range(run.start, len(planned)):
        yield ("begin", index)
        result = run_check(planned[index].check, planned[index].target, timeout_s=run.timeout_s)
        yield ("result", index, result.row(), result.leftovers, tuple(target.known_hangs.items()))
        if result.leftovers and index + 1 < len(planned):
            yield ("restart", index + 1, f"{result.rule} {result.check} left threads busy "
                                         f"({', '.join(result.leftovers)})")
            return
    if run.fuzz_examples and target.fuzz_phase:
        if status is not None:
            status.write("the fuzz phase")
        from rstck.fuzz.phase import run_phase  # Hypothesis is imported only when the phase runs

        rows, summaries = run_phase(target, run.target_spec, examples=run.fuzz_examples, timeout_s=run.timeout_s)
        yield ("fuzz", [row.row() for row in rows], [dataclasses.asdict(s) for s in summaries])
    yield ("done",)


def _planned_info(planned: Any) -> dict[str, Any]:
    from rstck.core.catalog import load_catalog

    item = load_catalog()[planned.check.rule]
    return {"rule": planned.check.rule, "check": planned.check.name, "role": planned.check.role,
            "level": item.level, "spec": item.spec, "view": planned.view, "target": planned.target.name}


def _worker_main(connection: Any, run: CheckRun) -> None:
    """The worker process: run, tell the supervisor everything, and end without waiting for anyone."""
    def work() -> None:
        status = CallStatus(run.status_path)
        for event in run_events(run, status):
            connection.send(event)

    _live_as_a_worker(connection, work)


def _live_as_a_worker(connection: Any, work: Callable[[], None]) -> None:
    """A worker process's life around its `work`: Ctrl-C left to the supervisor (which blocked it until the
    handler below is in place: _run_worker, CheckWorker._start), a broken kit told to the supervisor, and an
    end that waits for nobody."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the supervisor's; any interrupt here is the target's
    _ctrl_c_blocked(False)
    code = 0
    try:
        work()
    except BaseException:  # noqa: BLE001 - the kit broke: say so, then end like any worker
        try:
            connection.send(("crash", traceback.format_exc()))
        except BaseException:  # noqa: BLE001 - the pipe is gone: the supervisor sees the worker die
            pass
        code = 3
    finally:
        from rstck.core.process_end import flush_std_streams  # loaded by the checks already

        flush_std_streams()
        os._exit(code)  # threads the target left behind must not keep the worker alive


class KitBroke(Exception):
    """The kit itself failed in the worker (a defect of rstck): the worker's traceback."""


@dataclasses.dataclass
class Supervised:
    """What a supervised run found: the plan, one row per check that ran (and the fuzz phase's), notes."""

    target: str = ""
    skipped: dict[str, int] = dataclasses.field(default_factory=dict)
    checks: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    rows: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    fuzz: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    notes: list[str] = dataclasses.field(default_factory=list)
    interrupted: bool = False


class Observer:
    """What the supervisor tells as it goes (progress on a terminal, rows to a file)."""

    def begin(self, number: int, total: int, info: dict[str, Any]) -> None: ...
    def tick(self) -> None: ...
    def row(self, row: dict[str, Any]) -> None: ...
    def close(self) -> None: ...


def supervise(run: CheckRun, observer: Observer, *, in_process: bool = False) -> Supervised:
    """Run `run` in worker processes (or, `in_process`, here), restarting after a death or a busy leftover."""
    outcome = Supervised()
    known_hangs: tuple[tuple[str, str], ...] = ()
    start = 0
    status_path = new_status_file()
    restore = _remember_ctrl_c()
    try:
        while True:
            current = dataclasses.replace(run, start=start, known_hangs=known_hangs, status_path=status_path)
            if in_process:
                ended = _drive(iter(run_events(current)), None, current, outcome, observer)
            else:
                ended = _run_worker(current, outcome, observer)
            kind = ended[0]
            if kind == "restart":
                start, why = ended[1], ended[2]
                outcome.notes.append(f"{why}: the remaining checks ran in a fresh worker process")
                known_hangs = ended[3]
                continue
            return outcome
    except KeyboardInterrupt:
        outcome.interrupted = True
        return outcome
    finally:
        restore()
        observer.close()
        os.unlink(status_path)


_ctrl_c = threading.Event()


def _remember_ctrl_c() -> Callable[[], None]:
    """Ctrl-C raises KeyboardInterrupt as usual, and is also remembered: Python swallows an exception
    raised while a finalizer runs (`__del__` of a connection being collected), and the supervisor
    must stop all the same. Returns what puts the previous handler back."""
    _ctrl_c.clear()
    if threading.current_thread() is not threading.main_thread():
        return lambda: None

    def on_ctrl_c(signum: int, frame: Any) -> None:
        _ctrl_c.set()
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGINT, on_ctrl_c)
    return lambda: signal.signal(signal.SIGINT, previous)


def _ctrl_c_blocked(blocked: bool) -> None:
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_BLOCK if blocked else signal.SIG_UNBLOCK, {signal.SIGINT})


def _stop_if_interrupted() -> None:
    if _ctrl_c.is_set():
        raise KeyboardInterrupt


def _run_worker(run: CheckRun, outcome: Supervised, observer: Observer) -> tuple:
    method = "fork" if sys.platform.startswith("linux") else "spawn"
    context = multiprocessing.get_context(method)
    receiving, sending = context.Pipe(duplex=False)
    worker = context.Process(target=_worker_main, args=(sending, run), name="rstck-worker", daemon=True)
    _ctrl_c_blocked(True)  # a Ctrl-C as the worker starts is the supervisor's, never a crash of the worker
    try:
        worker.start()
    finally:
        _ctrl_c_blocked(False)
    sending.close()
    status = CallStatus(run.status_path)
    try:
        return _drive(_received(receiving, worker, run, observer), (worker, status), run, outcome, observer)
    except KeyboardInterrupt:
        worker.kill()
        raise
    finally:
        if worker.is_alive():
            worker.kill()
        worker.join(5)
        receiving.close()


def _received(connection: Any, worker: Any, run: CheckRun, observer: Observer) -> Iterator[tuple]:
    """The worker's events; ("died", exit code) when it ends without saying it is done, ("stuck",) when a
    check outlives the watchdog."""
    began: float | None = None
    while True:
        if connection.poll(0.1):
            try:
                event = connection.recv()
            except (EOFError, OSError):
                worker.join(5)
                yield ("died", worker.exitcode)
                return
            began = time.monotonic() if event[0] == "begin" else None if event[0] == "result" else began
            yield event
            if event[0] in ("done", "bad_input", "crash", "restart"):
                return
            continue
        _stop_if_interrupted()
        observer.tick()
        if not worker.is_alive() and not connection.poll(0):
            yield ("died", worker.exitcode)
            return
        if began is not None and time.monotonic() - began > watchdog_s(run.timeout_s):
            worker.kill()
            yield ("stuck",)
            return


def _drive(events: Iterator[tuple], worker: Any, run: CheckRun, outcome: Supervised,
           observer: Observer) -> tuple:
    """Take in a worker's events; what ended it: ("done",), or ("restart", next index, why, known hangs)."""
    from rstck.core.verdict import BadInput

    in_progress: int | None = None
    known_hangs = run.known_hangs
    for event in events:
        _stop_if_interrupted()
        kind = event[0]
        if kind == "plan":
            info = event[1]
            outcome.target, outcome.skipped = info["target"], info["skipped"]
            outcome.checks = info["checks"]
        elif kind == "begin":
            in_progress = event[1]
            observer.begin(in_progress + 1, len(outcome.checks), outcome.checks[in_progress])
        elif kind == "result":
            _, index, row, _leftovers, known_hangs = event
            in_progress = None
            outcome.rows.append(row)
            observer.row(row)
        elif kind == "restart":
            return ("restart", event[1], event[2], known_hangs)
        elif kind == "fuzz":
            outcome.rows += event[1]
            for row in event[1]:
                observer.row(row)
            outcome.fuzz = event[2]
        elif kind == "bad_input":
            raise BadInput(event[1])
        elif kind == "crash":
            raise KitBroke(event[1])
        elif kind in ("died", "stuck"):
            call = worker[1].read() if worker is not None else ""
            if kind == "died":
                what = f"the target ended the process ({_exit_text(event[1])})"
            else:
                what = f"the worker process stopped answering for {watchdog_s(run.timeout_s):g} s and was stopped"
            if in_progress is None:
                if not outcome.checks:
                    raise BadInput(f"target {run.target_spec!r}: {what} while it was being loaded")
                outcome.notes.append(f"{what} during {call or 'the fuzz phase'}; no more was run")
                return ("done",)
            row = error_row(outcome.checks[in_progress], f"{what} during {call or 'the check'}")
            outcome.rows.append(row)
            observer.row(row)
            if in_progress + 1 >= len(outcome.checks):
                return ("done",)
            return ("restart", in_progress + 1, f"{what} in {row['rule']} {row['check']}", known_hangs)
        elif kind == "done":
            return ("done",)
    return ("done",)


def _exit_text(code: int | None) -> str:
    if code is None:
        return "it did not say how"
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit {code}"


def error_row(info: dict[str, Any], reason: str) -> dict[str, Any]:
    """The row of a check the target's process death cut short."""
    from rstck.execution.runner import Result
    from rstck.core.verdict import Verdict

    result = Result(target=info["target"], spec=info["spec"], rule=info["rule"], level=info["level"],
                    check=info["check"], role=info["role"], verdict=Verdict.ERROR, reason=reason,
                    message=f"error: {reason}")
    return result.row()


# -- a worker that outlives its checks: the pytest route ----------------------------------------------------


class CheckWorker:
    """One worker process that runs checks one at a time, as asked, and outlives them: the pytest plugin's.
    It is supervised as `supervise` supervises `rstck check`'s workers: a check the worker dies in (or stops
    answering in) gets the same error row, a check that left threads busy retires it, and the next check
    runs in a fresh worker. The worker is forked (Linux), so `resolve` finds a check by its key in the
    memory the worker shares with the process that collected it."""

    def __init__(self, resolve: Callable[[Any], tuple[Any, Any]]):
        self._resolve = resolve
        self._status_path = new_status_file()
        self._process: Any = None
        self._requests: Any = None
        self._events: Any = None
        self._status: CallStatus | None = None
        self.left_behind: list[str] = []  # threads the target left running in workers that have ended
        self.notes: list[str] = []  # what no check's row says: a worker that ended while no check was running

    def run(self, key: Any, info: dict[str, Any], timeout_s: float) -> tuple[dict[str, Any], tuple]:
        """Run the check `key` names (`info`: its plan entry); its row and the target's known hangs then."""
        run = CheckRun(info["target"], None, timeout_s, 0)
        for attempt in (1, 2):  # a worker that died between checks is replaced, and the check asked again
            if self._process is None:
                self._start()
            seen: dict[str, Any] = {}
            outcome = Supervised()
            try:
                self._requests.send((key, timeout_s))
            except OSError:
                pass  # it died meanwhile: its events say so
            events = itertools.chain([("plan", {"target": info["target"], "skipped": {}, "checks": [info]})],
                                     self._until_result(run, seen))
            try:
                _drive(events, (self._process, self._status), run, outcome, Observer())
            except BaseException:
                self._stop(kill=True)
                raise
            if "begin" in seen or attempt == 2:
                break
            self._stop(kill=True)
            self.notes.append(f"the worker process ended ({_exit_text(seen.get('exit'))}) while no check was "
                              f"running; {info['rule']} {info['check']} ran in a fresh one")
        if "result" not in seen or seen["leftovers"]:  # it died, was stopped, or asks to be replaced
            self._stop(kill="result" not in seen)
        if not outcome.rows:
            raise KitBroke(f"the worker process ended twice before it began {info['rule']} {info['check']}: "
                           f"{'; '.join(outcome.notes)}")
        return outcome.rows[0], seen.get("known_hangs", ())

    def close(self) -> None:
        if self._process is not None:
            self._stop(kill=False)
        if os.path.exists(self._status_path):
            os.unlink(self._status_path)

    def _start(self) -> None:
        context = multiprocessing.get_context("fork")
        requests, self._requests = context.Pipe(duplex=False)
        self._events, events = context.Pipe(duplex=False)
        self._process = context.Process(target=_serve, name="rstck-worker", daemon=True,
                                        args=(requests, events, (self._requests, self._events), self._status_path,
                                              self._resolve))
        _ctrl_c_blocked(True)  # a Ctrl-C as the worker starts is the supervisor's, never a crash of the worker
        try:
            self._process.start()
        finally:
            _ctrl_c_blocked(False)
        requests.close()
        events.close()
        self._status = CallStatus(self._status_path)

    def _until_result(self, run: CheckRun, seen: dict[str, Any]) -> Iterator[tuple]:
        for event in _received(self._events, self._process, run, Observer()):
            seen[event[0]] = True
            if event[0] == "died":
                seen["exit"] = event[1]
            if event[0] == "result":
                seen["leftovers"], seen["known_hangs"] = event[3], event[4]
            yield event
            if event[0] == "result":
                return

    def _stop(self, *, kill: bool) -> None:
        """End the worker: politely (it names the threads the target left running, then ends), or at once."""
        process, self._process = self._process, None
        if not kill:
            try:
                self._requests.send(None)
            except OSError:
                pass
            if self._events.poll(5):
                try:
                    event = self._events.recv()
                except (EOFError, OSError):
                    event = ()
                if event and event[0] == "bye":
                    self.left_behind += event[1]
        if process.is_alive():
            process.kill()
        process.join(5)
        self._requests.close()
        self._events.close()


def _serve(requests: Any, events: Any, parent_ends: tuple, status_path: str,
           resolve: Callable[[Any], tuple[Any, Any]]) -> None:
    """A CheckWorker's process: run the checks asked for until told to stop, then say which threads the target
    left running and end without waiting for them."""
    _live_as_a_worker(events, lambda: _serve_checks(requests, events, parent_ends, status_path, resolve))


def _serve_checks(requests: Any, events: Any, parent_ends: tuple, status_path: str,
                  resolve: Callable[[Any], tuple[Any, Any]]) -> None:
    for connection in parent_ends:  # else the supervisor's end of the requests would never read as closed here
        connection.close()
    from rstck.core import calls as calls_module
    from rstck.execution.runner import run_check
    from rstck.core.process_end import left_behind

    status = CallStatus(status_path)
    calls_module.CALL_STATUS = status.write
    while True:
        try:
            request = requests.recv()
        except EOFError:  # the supervisor is gone
            break
        if request is None:
            break
        key, timeout_s = request
        check, target = resolve(key)
        status.write("")
        events.send(("begin", 0))
        result = run_check(check, target, timeout_s=timeout_s)
        events.send(("result", 0, result.row(), result.leftovers, tuple(target.known_hangs.items())))
        if result.leftovers:  # nothing the abandoned check left may slow down or grow the next ones
            break
    events.send(("bye", sorted(thread.name for thread in left_behind())))
