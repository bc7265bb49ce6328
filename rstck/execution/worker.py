"""A supervised worker process: it runs jobs one at a time, as its supervisor asks, and outlives them; the
supervisor outlives it. Checks and fuzz shards run in workers, never in the process that reports on them:
`rstck check` (rstck/execution/supervise.py), the pytest plugin's checks and fuzz items, `rstck fuzz`
(rstck/fuzz/local_engine.py) and the Spark fuzz engine's tasks.

- **The target ends the process** (`os._exit`, a crash in a C extension, the OOM killer): the worker keeps the
  call it is in on a page of shared memory (CallStatus), which is all that is left to read; the job ends as
  lost, naming that call, and the next job runs in a fresh worker.
- **The worker stops answering** (a C extension holding the interpreter): a job that has begun and then said
  nothing for its watchdog's time is lost the same way, and the worker is stopped. A job tells "begin" once
  what it loads and prepares is done (outside every deadline); each event it sends after that (progress, a
  heartbeat) starts its silence afresh.
- **A job leaves the target's threads busy**: its answer says so and the worker retires, so that nothing the
  job left slows down or grows the memory of later jobs; the next job runs in a fresh worker.
- **The worker dies between jobs** (a thread the target left behind ends it): the job asked of it runs in a
  fresh worker, once, and a note says so.

A worker ends with `os._exit` once it has said everything, so threads the target left behind cannot keep it
alive; Ctrl-C is the supervisor's (the worker ignores SIGINT). On Linux a worker is forked (on plain `os.fork`:
rstck/execution/forked.py) unless its supervisor asks for a spawned one; elsewhere it is spawned (by
`multiprocessing`), and its `perform` and jobs must be picklable.
"""

from __future__ import annotations

import dataclasses
import mmap
import os
import signal
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from rstck.execution.forked import ForkedProcess, channel_pair, wait

STATUS_BYTES = 512
TICK_S = 0.1  # how often a supervisor looks at a silent worker (and its progress line is redrawn)
POLITE_STOP_S = 5.0  # how long a worker that is asked to stop may take to say which threads the target left

# A job's work, in the worker: (job, tell) -> (answer, the threads the job left busy). `tell` sends an event to
# the supervisor on the way: ("begin",) once the job's own work begins, then progress, which is also a heartbeat.
Perform = Callable[[Any, Callable[[tuple], None]], tuple[Any, list[str]]]


def watchdog_s(timeout_s: float) -> float:
    """How long a job that has begun may say nothing before the supervisor stops its worker. The job's own
    watcher gives up on a check or a fuzz step at its deadline and a grace; this is only for a worker that
    cannot run Python any more (a C extension holding the interpreter)."""
    return 2 * timeout_s + 10.0


class KitBroke(Exception):
    """The kit itself failed in the worker (a defect of rstck): the worker's traceback."""


class CallStatus:
    """A few hundred bytes of shared memory where the worker keeps the call it is in: all that is left
    to read when the target kills the process. Anonymous (`path` None) for a forked worker, which inherits the
    mapping and leaves no file behind however its supervisor ends; a spawned worker maps the file at `path`."""

    def __init__(self, path: str | None):
        self._file = None if path is None else open(path, "r+b")  # noqa: SIM115 - lives as long as its map
        self._map = mmap.mmap(-1 if self._file is None else self._file.fileno(), STATUS_BYTES)

    def write(self, text: str) -> None:
        data = text.encode("utf-8", "replace")[:STATUS_BYTES - 1]
        self._map[:len(data) + 1] = data + b"\0"

    def read(self) -> str:
        return self._map[:STATUS_BYTES].split(b"\0", 1)[0].decode("utf-8", "replace")

    def close(self) -> None:  # idempotent: a worker may be closed twice
        self._map.close()
        if self._file is not None:
            self._file.close()


def _new_status_file() -> str:
    import tempfile  # a spawned worker's only

    handle, path = tempfile.mkstemp(prefix="rstck-status-")
    os.write(handle, b"\0" * STATUS_BYTES)
    os.close(handle)
    return path


@dataclasses.dataclass(frozen=True)
class Ended:
    """How a job ended: answered (`answer`, and `leftovers`: the target's threads it left busy), or `lost`: its
    worker "died" (`exit_code`) or was "stopped" after `silent_s` of silence, during `call` (the call the worker
    said it was in, if any). `began`: whether the job's own work had begun when it was lost."""

    answer: Any = None
    leftovers: tuple[str, ...] = ()
    lost: str = ""
    exit_code: int | None = None
    silent_s: float = 0.0
    call: str = ""
    began: bool = True

    @property
    def what(self) -> str:
        """The loss as rows and notes tell it."""
        if self.lost == "died":
            return f"the target ended the process ({exit_text(self.exit_code)})"
        return f"the worker process stopped answering for {self.silent_s:g} s and was stopped"


def exit_text(code: int | None) -> str:
    if code is None:
        return "it did not say how"
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit {code}"


class Worker:
    """A place for one supervised worker process at a time, started when a job is asked of it and replaced
    after a death, a watchdog stop or a job that left threads busy. `job_name` says in notes what it runs."""

    def __init__(self, perform: Perform, *, method: str | None = None, name: str = "rstck-worker",
                 job_name: str = "check"):
        self._perform = perform
        self._method = method or ("fork" if sys.platform.startswith("linux") else "spawn")
        self._name = name
        self._job_name = job_name
        self._status_path = None if self._method == "fork" else _new_status_file()
        self._status = CallStatus(self._status_path)
        self._process: Any = None
        self._requests: Any = None
        self._events: Any = None
        self._job: Any = None  # the job asked and not yet ended
        self._label = ""
        self._watchdog_s: float | None = None
        self._began = False
        self._heard = 0.0
        self._asked_again = False
        self.left_behind: list[str] = []  # threads the target left running in worker processes that have ended
        self.notes: list[str] = []  # what no job's answer says: a worker that ended while no job was running

    @property
    def busy(self) -> bool:
        return self._job is not None

    def ask(self, job: Any, *, label: str, watchdog_s: float | None) -> None:
        """Send `job` (described by `label` in notes) to the worker, starting one if none runs. `watchdog_s`:
        how long the job may say nothing once it has begun (None: as long as it takes)."""
        self._job, self._label, self._watchdog_s = job, label, watchdog_s
        self._began, self._asked_again = False, False
        self._send(job)

    def run(self, job: Any, *, label: str, watchdog_s: float | None, on_event: Callable[[tuple], None] | None = None,
            tick: Callable[[], None] | None = None) -> Ended:
        """Ask `job` and wait for its end, passing on its events (and calling `tick` while it is silent)."""
        self.ask(job, label=label, watchdog_s=watchdog_s)
        while True:
            for _worker, events, ended in listen([self]):
                for event in events:
                    if on_event is not None:
                        on_event(event)
                if ended is not None:
                    return ended
            if tick is not None:
                tick()

    def waits_on(self) -> list[Any]:
        """What becomes ready when the worker says something or dies (for `wait`)."""
        return [self._events, self._process.sentinel]

    def take(self) -> tuple[list[tuple], Ended | None]:
        """What the job has told since last asked, and how it ended if it has; never waits."""
        events: list[tuple] = []
        while True:
            try:
                if not self._events.poll(0):
                    break
                event = self._events.recv()
            except (EOFError, OSError):
                return events, self._lost("died")
            self._heard = time.monotonic()
            if event[0] == "crash":
                self._stop(kill=True)
                self._job = None
                raise KitBroke(event[1])
            if event[0] == "begin":
                self._began = True
            elif event[0] == "result":
                self._job = None
                ended = Ended(answer=event[1], leftovers=tuple(event[2]))
                if ended.leftovers:
                    self._stop(kill=False)  # it ends after such a job: what it left is named, and it is replaced
                return events, ended
            else:
                events.append(event)
        if not self._process.is_alive() and not self._events.poll(0):
            return events, self._lost("died")
        silent_s = time.monotonic() - self._heard
        if self._began and self._watchdog_s is not None and silent_s > self._watchdog_s:
            self._process.kill()
            return events, self._lost("stopped", silent_s=self._watchdog_s)
        return events, None

    def close(self) -> None:
        """Stop the worker (politely between jobs: it names the threads the target left running, then ends; at
        once in the middle of one, as after a Ctrl-C) and clean up."""
        if self._process is not None:
            self._stop(kill=self.busy)
        self._job = None
        self._status.close()
        if self._status_path is not None and os.path.exists(self._status_path):
            os.unlink(self._status_path)

    # -- the process ----------------------------------------------------------------------------------

    def _send(self, job: Any) -> None:
        if self._process is None:
            self._start()
        self._heard = time.monotonic()
        try:
            self._requests.send(job)
        except OSError:
            pass  # it died meanwhile: take() sees it

    def _start(self) -> None:
        self._status.write("")  # nothing a worker before this one was in
        if self._method == "fork":  # the map is inherited; plain os.fork spares the run multiprocessing's import
            requests, self._requests = channel_pair()
            self._events, events = channel_pair()
            self._process = ForkedProcess(_serve, (requests, events, (self._requests, self._events), self._status,
                                                   self._perform))
        else:
            import multiprocessing  # a spawned worker's only

            context = multiprocessing.get_context(self._method)
            requests, self._requests = context.Pipe(duplex=False)
            self._events, events = context.Pipe(duplex=False)
            self._process = context.Process(target=_serve, name=self._name, daemon=True,
                                            args=(requests, events, (self._requests, self._events), self._status_path,
                                                  self._perform))
        _ctrl_c_blocked(True)  # a Ctrl-C as the worker starts is the supervisor's, never a crash of the worker
        try:
            self._process.start()
        finally:
            _ctrl_c_blocked(False)
        requests.close()
        events.close()

    def _lost(self, how: str, *, silent_s: float = 0.0) -> Ended | None:
        call = self._status.read()
        self._process.join(POLITE_STOP_S)
        code = self._process.exitcode
        self._stop(kill=True)
        if not self._began and not self._asked_again:
            # It ended before the job began: between jobs (a thread the target left behind), not in this one.
            self.notes.append(f"the worker process ended ({exit_text(code)}) while no {self._job_name} was "
                              f"running; {self._label} ran in a fresh one")
            self._asked_again = True
            self._send(self._job)
            return None
        self._job = None
        return Ended(lost=how, exit_code=code, silent_s=silent_s, call=call, began=self._began)

    def _stop(self, *, kill: bool) -> None:
        """End the worker process: politely (it names the threads the target left running, then ends), or at
        once."""
        process, self._process = self._process, None
        if not kill:
            try:
                self._requests.send(None)
            except OSError:
                pass
            if self._events.poll(POLITE_STOP_S):
                try:
                    event = self._events.recv()
                except (EOFError, OSError):
                    event = ()
                if event and event[0] == "bye":
                    self.left_behind += event[1]
        if process.is_alive():
            process.kill()
        process.join(POLITE_STOP_S)
        try:
            process.close()
        except ValueError:  # multiprocessing's, still running after a kill and a join: its sentinel stays open
            pass
        self._requests.close()
        self._events.close()


def listen(workers: Iterable[Worker]) -> Iterator[tuple[Worker, list[tuple], Ended | None]]:
    """Wait (at most TICK_S) until a busy worker has something to say, then what each one said: its events, and
    how its job ended if it has."""
    busy = [worker for worker in workers if worker.busy]
    wait([ready for worker in busy for ready in worker.waits_on()], TICK_S)
    stop_if_interrupted()
    for worker in busy:
        events, ended = worker.take()
        if events or ended is not None:
            yield worker, events, ended


class InThisProcess:
    """Runs jobs here, as a Worker runs them in its process: for a debugger (`--in-process`); a target that ends
    the process then ends the run. There is no process to replace, so a job's leftovers are not told."""

    def __init__(self, perform: Perform):
        self._perform = perform

    def run(self, job: Any, *, label: str, watchdog_s: float | None, on_event: Callable[[tuple], None] | None = None,
            tick: Callable[[], None] | None = None) -> Ended:
        def tell(event: tuple) -> None:
            if event[0] != "begin" and on_event is not None:
                on_event(event)

        answer, _leftovers = self._perform(job, tell)
        return Ended(answer=answer)

    def close(self) -> None:
        """Nothing to stop."""


# -- in the worker process -------------------------------------------------------------------------------------


def _serve(requests: Any, events: Any, parent_ends: tuple, status: str | CallStatus, perform: Perform) -> None:
    """A worker process: run the jobs asked for until told to stop (or until one leaves threads busy), then say
    which threads the target left running and end without waiting for them."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the supervisor's; any interrupt here is the target's
    _ctrl_c_blocked(False)
    code = 0
    try:
        _serve_jobs(requests, events, parent_ends, status, perform)
    except BaseException:  # noqa: BLE001 - the kit broke: say so, then end like any worker
        try:
            events.send(("crash", traceback.format_exc()))
        except BaseException:  # noqa: BLE001 - the pipe is gone: the supervisor sees the worker die
            pass
        code = 3
    finally:
        from rstck.core.process_end import flush_std_streams  # loaded by the jobs already

        flush_std_streams()
        os._exit(code)  # threads the target left behind must not keep the worker alive


def _serve_jobs(requests: Any, events: Any, parent_ends: tuple, status: str | CallStatus, perform: Perform) -> None:
    for connection in parent_ends:  # else the supervisor's end of the requests would never read as closed here
        connection.close()
    from rstck.core import calls as calls_module
    from rstck.core.process_end import left_behind

    status = status if isinstance(status, CallStatus) else CallStatus(status)  # forked: the supervisor's own map
    calls_module.CALL_STATUS = status.write
    while True:
        try:
            job = requests.recv()
        except EOFError:  # the supervisor is gone
            break
        if job is None:
            break
        status.write("")
        answer, leftovers = perform(job, events.send)
        events.send(("result", answer, list(leftovers)))
        if leftovers:  # nothing the job left may slow down or grow the next ones
            break
    events.send(("bye", sorted(thread.name for thread in left_behind())))


# -- Ctrl-C ----------------------------------------------------------------------------------------------------

_ctrl_c = threading.Event()


def remember_ctrl_c() -> Callable[[], None]:
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

    def restore() -> None:
        signal.signal(signal.SIGINT, previous)
        _ctrl_c.clear()  # it has been told: a supervisor that runs later in this process starts afresh

    return restore


def stop_if_interrupted() -> None:
    if _ctrl_c.is_set():
        raise KeyboardInterrupt


def _ctrl_c_blocked(blocked: bool) -> None:
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_BLOCK if blocked else signal.SIG_UNBLOCK, {signal.SIGINT})
