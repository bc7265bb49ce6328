"""Targets: what an adapter hands to the rules.

A target makes the objects under test (through factories), says what it offers
(capabilities, the most elements a publisher can make, the error types its language uses),
decides how the kit calls into the implementation and how it settles. Adapters, one per kind
of implementation, live in `rstck.adapters`; the core keeps only what every adapter shares.
"""

from __future__ import annotations

import dataclasses
import threading
import weakref
from typing import TYPE_CHECKING, Any, Callable

from rstck.core.probes import ProbeObserver
from rstck.core.session import Session
from rstck.core.settle import DEFAULT_DEADLINE_S, RESPONSIVENESS_BOUND_S, Settler
from rstck.core.signals import Trace
from rstck.core.thread_states import ThreadState
from rstck.core.verdict import NotApplicable

if TYPE_CHECKING:
    import asyncio
    from concurrent.futures import Executor, ThreadPoolExecutor


@dataclasses.dataclass(frozen=True)
class ErrorNames:
    """How a language names the spec's error types (`rstck.Profile` is its former name). Errors are matched by
    class name, a base class's included."""

    name: str
    type_error: str  # null arguments (1.9, 2.13)
    range_error: str  # request(n <= 0) (3.9)


PYTHON = ErrorNames("python", type_error="TypeError", range_error="ValueError")


# What a target can offer; a check that needs something a target lacks is n/a.
FACTORY_CAPABILITIES = ("publisher", "failed_publisher", "subscriber", "processor")


class Target:
    """Base of all targets. Adapters subclass it and fill in the factories they support."""

    name: str = "target"
    error_names: ErrorNames = PYTHON
    max_elements: int | None = None
    capabilities: frozenset[str] = frozenset()
    # The subjects a target of this kind may serve: a run names those this one does not (its capabilities).
    may_serve: frozenset[str] = frozenset()
    quiet_period_s: float | None = None
    responsiveness_bound_s: float = RESPONSIVENESS_BOUND_S
    stream_length: int = 0  # the stress mode (--stream-length): how long the streaming checks' streams are
    loaded_as: str = ""  # MODULE:ATTR, when the user named it so: reports say how to run it again
    fuzz_phase: bool = True  # whether `rstck check` fuzzes it after the checks (`rstck fuzz` runs it anyway)

    def __init__(self) -> None:
        self._active: Session | None = None
        # Calls that hung in a check, by method, with the check: the same hang later is recognised quickly.
        self.known_hangs: dict[str, str] = {}
        self._by_thread: weakref.WeakKeyDictionary[threading.Thread, Session] = weakref.WeakKeyDictionary()

    def new_publisher(self, session: Session, n: int) -> Any:
        raise NotApplicable("this target offers no publisher")

    def new_failed_publisher(self, session: Session) -> Any:
        raise NotApplicable("this target offers no failed publisher (create_failed_publisher)")

    def new_subscriber(self, session: Session) -> Any:
        raise NotApplicable("this target offers no subscriber")

    def new_whitebox_subscriber(self, session: Session, observer: ProbeObserver) -> Any:
        raise NotApplicable("this target offers no white-box subscriber (create_whitebox_subscriber)")

    def new_processor(self, session: Session) -> Any:
        raise NotApplicable("this target offers no processor")

    def context(self, kind: str, session: Session, rule: str) -> Any:
        """What a check of catalogue item `rule` is called with: its profile names the `kind` (rstck/core/plugins.py)
        and the adapter supplies it (a network server's connections, a Node process's streams); the check's session
        itself, with its probes and factories, by default."""
        if kind == "session":
            return session
        raise NotApplicable(f"this target offers no {kind} for a check to use")

    def prepare(self) -> None:
        """Get ready before the first check (e.g. start a Spark session), outside every check's deadline;
        BadInput says why the target cannot be used at all. `rstck check` and fuzz shards call it once."""

    def not_observable(self, rule: str) -> str | None:
        """Why catalogue item `rule` cannot be observed through this target (its checks are then n/a)."""
        return None

    def make_settler(self, trace: Trace) -> Settler:
        return Settler(trace, quiet_period_s=self.quiet_period_s)

    def outside_thread_states(self) -> dict[Any, ThreadState]:
        """The states of the implementation's threads that are not Python threads (a JVM's, say), by ids of the
        adapter's, read_states' kinds: what a linger or a yield waits for besides the Python threads settling watches
        (rstck.core.perturb). Called on the lingering thread; the thread the caller's own call runs on is left out.
        Empty by default: the implementation's threads are Python threads."""
        return {}

    def invoke(self, session: Session, function: Callable[..., Any], args: tuple) -> Any:
        """Make one call into the implementation (a factory, subscribe, request, an on_* signal)."""
        return function(*args)

    def loop_retry(self, exc: BaseException, call: str) -> BaseException | None:
        """Whether `exc`, raised by `call`, shows that the way the kit makes its calls does not suit the
        implementation (the in-process adapter: calls made inside a running asyncio loop, or outside any): the
        exception that starts the check over with calls made the other way, or None. A call that could not be
        made at all is `call_not_made`'s."""
        return None

    def call_not_made(self, exc: BaseException, call: str) -> Exception | None:
        """Whether `exc`, raised as the kit made `call` into the implementation, says the call never reached it:
        the adapter could not deliver it (the process the implementation runs in was gone before the call, the
        bridge to it broke). That is no answer of the implementation's to the call, so the call's rule is never
        charged for it: return the exception that ends the check instead, and the row is `error`, charged to
        - the target, with a TargetError, when the implementation made the call impossible itself (the Node
          adapter: it ended its own process, process.exit() in a callback of its own);
        - the adapter, with any other exception, when the adapter's own means failed ("the kit broke": an
          adapter is part of the kit).
        None, the default: the call was made, and `exc` is what the implementation raised."""
        return None

    def open_session(self, deadline_s: float = DEFAULT_DEADLINE_S) -> Session:
        session = Session(self, deadline_s)
        self._active = session
        return session

    def session_closed(self, session: Session) -> None:
        if self._active is session:
            self._active = None

    def session_abandoned(self, session: Session) -> None:
        """The runner gave `session`'s check up at its deadline (the session is sealed: what the check left is
        counted, not judged), while its thread may still be inside a call into the implementation that never
        returns. Let go at once of what only that thread would otherwise let go of: stop the process the check
        runs in, close its connections, so that the stuck call ends and nothing the check started outlives it.
        Called on the runner's thread, once; it must not wait for the check's thread. The default does
        nothing: a call into Python code cannot be interrupted, and its thread is left (a daemon; one that keeps
        a CPU busy is among the result's leftovers)."""

    def bind_thread(self, thread: threading.Thread, session: Session) -> None:
        """`thread` runs `session`'s check: what it asks of the target (target.executor, target.loop) is that
        session's, even once another check is the active one (an abandoned check's leftovers)."""
        self._by_thread[thread] = session

    # Implementations reach the active session's loop and executor through the target, so factories can be
    # written once: lambda n: MyPublisher(range(n), target.executor). Outside a check (a reproducer that calls the
    # factories, the user's own code) they are plain ones, so the same factories work there too.
    @property
    def executor(self) -> Executor:
        session = self._session_of_this_thread()
        return plain_executor() if session is None else session.executor

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        session = self._session_of_this_thread()
        if session is not None:
            return session.loop
        import asyncio

        try:
            return asyncio.get_running_loop()
        except RuntimeError:
            raise RuntimeError("outside a check, target.loop is the running event loop, and none runs on this "
                               "thread: call the factory inside one") from None

    def _session_of_this_thread(self) -> Session | None:
        """The session of the check this thread serves (None outside every check)."""
        return self._by_thread.get(threading.current_thread()) or self._active

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}>"


def load_target(spec: str) -> Target:
    """The target `spec` names: through the adapter whose scheme it starts with (tcp://HOST:PORT, node:PATH, ...,
    rstck/core/plugins.py), else as MODULE:ATTR, a Target the user's module builds. BadInput says what to fix."""
    from rstck.core.plugins import adapter_for, adapters
    from rstck.core.verdict import BadInput

    adapter = adapter_for(spec)
    if adapter is not None:
        target = adapter.load(spec)
        target.loaded_as = target.loaded_as or spec
        return target
    module_name, sep, attribute = spec.partition(":")
    if not sep or not module_name or not attribute:
        kinds = "; ".join(a.describes for a in adapters() if a.describes)
        raise BadInput(f"target {spec!r}: write it as MODULE:ATTRIBUTE, e.g. mypkg.tck:target ({kinds})")
    target = import_named(module_name, attribute, said=f"target {spec!r}")
    if not isinstance(target, Target):
        raise BadInput(f"target {spec!r} is a {type(target).__name__}, not a target: "
                       "assign rstck.InProcessTarget(create_publisher=...) to it")
    if target.name in ("target", "in-process target"):
        target.name = spec
    target.loaded_as = spec
    return target


def import_named(module_name: str, attribute: str, *, said: str) -> Any:
    """The object a user names as MODULE:ATTR (`attribute` may be dotted), imported as every rstck command imports
    the user's code (`rstck check`, `rstck fuzz`, `rstck serve`, `pytest --rstck-target`): with the current
    directory first on sys.path, as `python -m` puts it, so that a project's own package is found from its root.
    BadInput starting with `said` names what could not be found and where it was looked for."""
    import importlib
    import os
    import sys

    from rstck.core.verdict import BadInput

    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        found = importlib.import_module(module_name)
    except ImportError as exc:
        missing = getattr(exc, "name", None) or ""
        if not (module_name + ".").startswith(missing + "."):  # the module was found; something it imports was not
            raise BadInput(f"{said}: importing {module_name!r} raised {type(exc).__name__}: {exc}") from exc
        raise BadInput(f"{said}: cannot import {module_name!r} ({exc}) from the current directory "
                       f"({os.getcwd()}) or the installed packages: run from the directory that holds "
                       f"{missing.partition('.')[0]}, or install it (pip install -e PROJECT)") from exc
    except Exception as exc:
        raise BadInput(f"{said}: importing {module_name!r} raised {type(exc).__name__}: {exc}") from exc
    for part in attribute.split("."):
        try:
            found = getattr(found, part)
        except AttributeError:
            raise BadInput(f"{said}: module {module_name!r} has no attribute {attribute!r}") from None
    return found


_plain_executor: list[ThreadPoolExecutor] = []
_plain_executor_made = threading.Lock()


def plain_executor() -> ThreadPoolExecutor:
    """The thread pool target.executor is outside a check: one per process, made when first asked for."""
    from concurrent.futures import ThreadPoolExecutor  # only outside the kit's checks: costly to import

    with _plain_executor_made:
        if not _plain_executor:
            _plain_executor.append(ThreadPoolExecutor(thread_name_prefix="target-executor"))
    return _plain_executor[0]
