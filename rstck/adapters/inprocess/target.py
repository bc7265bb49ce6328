"""The in-process adapter: Python publishers, subscribers and processors, made by factories.

Every call the kit makes into the implementation from a check's own thread (the factories,
`subscribe`, `request`, `cancel`, and the kit's `on_*` signals to a subscriber under test) runs
as a callback of the check's event loop would, on that thread, with the loop running: idiomatic
asyncio code (`asyncio.get_running_loop()`, `create_task()`, `call_soon()`) works unchanged, and
whatever the call raises reaches the kit exactly as raised. Synchronous and threaded code does
not notice. Code that runs an event loop of its own inside such a call (`asyncio.run()` in
`request`) is refused by asyncio; the check then starts over with calls made outside any loop,
and the target keeps to that (`calls_in_loop=False` says so from the start).
"""

from __future__ import annotations

import sys
import threading
import traceback
from typing import Any, Callable

from rstck.core.probes import ProbeObserver
from rstck.core.calls import RetryCallMode
from rstck.core.session import Session
from rstck.core.settle import RESPONSIVENESS_BOUND_S
from rstck.core.signals import show
from rstck.core.target import FACTORY_CAPABILITIES, PYTHON, ErrorNames, Target
from rstck.core.verdict import TargetError

# The methods an object must have to be what its factory promises.
ROLE_METHODS = {
    "publisher": ("subscribe",),
    "subscriber": ("on_subscribe", "on_next", "on_error", "on_complete"),
    "processor": ("subscribe", "on_subscribe", "on_next", "on_error", "on_complete"),
}


class InProcessTarget(Target):
    """A target made of Python factories.

    create_publisher(n): a publisher of exactly n elements, then on_complete.
    create_failed_publisher(): optional; a publisher that signals on_error after on_subscribe.
    max_elements: None when any n can be produced, else the most the publisher can produce.
    create_subscriber(): optional; a subscriber under test (called with no argument).
    create_whitebox_subscriber(observer): optional; a subscriber that tells `observer` when it has
        processed each signal (the white-box checks, 2.11). It also serves the black-box checks
        when there is no create_subscriber.
    create_processor(): optional; an identity processor under test.
    quiet_period_s: an explicit override: after everything the kit can watch has gone idle,
        settling also waits until no signal arrived for this long. Not needed for threads the
        implementation starts itself, which the kit watches on its own.
    responsiveness_bound_s: how long request, cancel (3.4, 3.5) and on_next (2.2) may take to
        return.
    calls_in_loop: None (the default): calls run inside the check's running event loop, and
        outside it once the implementation shows that it runs a loop of its own; True: always
        inside; False: never.
    """

    may_serve = frozenset({"publisher", "subscriber", "processor"})

    def __init__(self, create_publisher: Callable[[int], Any] | None = None,
                 create_failed_publisher: Callable[[], Any] | None = None,
                 max_elements: int | None = None, *,
                 create_subscriber: Callable[[], Any] | None = None,
                 create_whitebox_subscriber: Callable[[Any], Any] | None = None,
                 create_processor: Callable[[], Any] | None = None,
                 name: str | None = None, quiet_period_s: float | None = None,
                 responsiveness_bound_s: float = RESPONSIVENESS_BOUND_S, error_names: ErrorNames = PYTHON,
                 calls_in_loop: bool | None = None, profile: ErrorNames | None = None):
        super().__init__()
        factories = {"create_publisher": create_publisher, "create_failed_publisher": create_failed_publisher,
                     "create_subscriber": create_subscriber, "create_whitebox_subscriber": create_whitebox_subscriber,
                     "create_processor": create_processor}
        for label, factory in factories.items():
            if factory is not None and not callable(factory):
                raise TypeError(f"InProcessTarget: {label} must be callable, got {show(factory)}")
        if max_elements is not None and (not isinstance(max_elements, int) or max_elements < 0):
            raise TypeError(f"InProcessTarget: max_elements must be None or an int >= 0, got {max_elements!r}")
        if calls_in_loop not in (None, True, False):
            raise TypeError(f"InProcessTarget: calls_in_loop must be None, True or False, got {calls_in_loop!r}")
        self.create_publisher = create_publisher
        self.create_failed_publisher = create_failed_publisher
        self.create_subscriber = create_subscriber
        self.create_whitebox_subscriber = create_whitebox_subscriber
        self.create_processor = create_processor
        self.max_elements = max_elements
        self.name = name or "in-process target"
        self.quiet_period_s = quiet_period_s
        self.responsiveness_bound_s = responsiveness_bound_s
        self.error_names = profile or error_names  # `profile`: the former name of `error_names`
        self.calls_in_loop = calls_in_loop
        self._in_loop = calls_in_loop is not False
        self._needs_loop = False
        offered = dict(zip(FACTORY_CAPABILITIES, (create_publisher, create_failed_publisher,
                                                 create_subscriber or create_whitebox_subscriber, create_processor)))
        self.capabilities = frozenset({k for k, v in offered.items() if v is not None}
                                      | {"null_arguments", "call_depth", "identity", "threads"}
                                      | ({"observer"} if create_whitebox_subscriber else set()))

    def new_publisher(self, session: Session, n: int) -> Any:
        if self.create_publisher is None:
            return super().new_publisher(session, n)
        return _made(self, session, f"create_publisher({n})", "publisher", self.create_publisher, n)

    def new_failed_publisher(self, session: Session) -> Any:
        if self.create_failed_publisher is None:
            return super().new_failed_publisher(session)
        return _made(self, session, "create_failed_publisher()", "publisher", self.create_failed_publisher)

    def new_subscriber(self, session: Session) -> Any:
        if self.create_subscriber is not None:
            return _made(self, session, "create_subscriber()", "subscriber", self.create_subscriber)
        if self.create_whitebox_subscriber is not None:
            return self.new_whitebox_subscriber(session, session.observer())
        return super().new_subscriber(session)

    def new_whitebox_subscriber(self, session: Session, observer: ProbeObserver) -> Any:
        if self.create_whitebox_subscriber is None:
            return super().new_whitebox_subscriber(session, observer)
        return _made(self, session, "create_whitebox_subscriber(observer)", "subscriber",
                     self.create_whitebox_subscriber, observer)

    def new_processor(self, session: Session) -> Any:
        if self.create_processor is None:
            return super().new_processor(session)
        return _made(self, session, "create_processor()", "processor", self.create_processor)

    def scripted_factory(self, name: str, factory: Callable[..., Any]) -> Any:
        """What a reproducer calls for the factory `name` (`factory`, which the kit called): imported by its own name
        when it has one (rstck/core/evidence.py, `importable_name`)."""
        return factory

    def invoke(self, session: Session, function: Callable[..., Any], args: tuple) -> Any:
        # Code that never imported asyncio cannot look for a running loop: a plain call (and asyncio stays
        # unloaded, which keeps a synchronous target's run fast to start).
        asyncio = sys.modules.get("asyncio")
        if (asyncio is None or not self._in_loop or threading.current_thread() is not session.check_thread
                or asyncio._get_running_loop() is not None):
            return function(*args)  # a nested call (from inside a signal), another thread, or outside loops
        from rstck.core.loops import call_in_loop

        return call_in_loop(session.loop, function, args)

    def loop_retry(self, exc: BaseException, call: str) -> BaseException | None:
        if self.calls_in_loop is not None or not isinstance(exc, RuntimeError):
            return None
        message = str(exc)
        if self._in_loop and any(text in message for text in _NESTED_LOOP_MESSAGES):
            self._in_loop = False
            return RetryCallMode(f"{call} runs an event loop of its own")
        if "no running event loop" in message and "asyncio" in sys.modules and not self._needs_loop:
            self._needs_loop = True  # it imported asyncio only now: from here on, calls go in the loop
            return RetryCallMode(f"{call} needs a running event loop")
        return None


# What asyncio says when code that runs a loop of its own is called inside a running one.
_NESTED_LOOP_MESSAGES = ("cannot be called from a running event loop", "Cannot run the event loop while another",
                         "This event loop is already running")


def _made(target: InProcessTarget, session: Session, call: str, role: str, factory: Callable[..., Any],
          *args: Any) -> Any:
    """Call a factory; what it raises or returns instead of a `role` is the target's fault, not a rule's."""
    try:
        with session.calls.underway(call, "", call.split("(")[0]):  # a factory that never returns: a target error
            made = session.calls.invoke(factory, args)
    except RetryCallMode:
        raise
    except BaseException as exc:  # noqa: BLE001 - whatever a factory raises is the target's
        retry = session.target.loop_retry(exc, call)
        if retry is not None:
            raise retry from exc
        raise TargetError(f"{call} raised {show(exc)}\n{users_traceback(exc)}") from exc
    missing = [m for m in ROLE_METHODS[role] if not callable(getattr(made, m, None))]
    if made is None or missing:
        what = "None" if made is None else f"{show(made)}, which has no {', '.join(missing)}"
        raise TargetError(f"{call} returned {what}: not a {role}")
    name = call.split("(")[0]
    session.evidence.made(made, name, args, role, by=target.scripted_factory(name, factory))
    return made


def users_traceback(exc: BaseException) -> str:
    """The traceback of `exc` limited to the frames of the user's code (not the kit's, not asyncio's)."""
    import rstck

    kit = rstck.__path__[0]
    frames = [f for f in traceback.extract_tb(exc.__traceback__)
              if not f.filename.startswith(kit) and "/asyncio/" not in f.filename]
    lines = traceback.format_list(frames) + traceback.format_exception_only(type(exc), exc)
    return "".join(lines).rstrip()
