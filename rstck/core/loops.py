"""What the kit does with an asyncio event loop: run it until idle, make a call inside it, wind it down.

Imported only when an event loop is in use (the implementation under test loaded asyncio), so that
a synchronous or threaded target never pays for importing asyncio.
"""

from __future__ import annotations

import asyncio
import threading
import time


class TimerPastDeadline(Exception):
    """The loop's next timer is due after the check's deadline: it cannot settle in time."""


def _next_timer(loop: asyncio.AbstractEventLoop) -> float | None:
    # CPython's BaseEventLoop keeps ready callbacks in `_ready` and timers in
    # `_scheduled`; no public API tells whether a loop has work pending.
    whens = [h.when() for h in loop._scheduled if not h.cancelled()]  # type: ignore[attr-defined]
    return min(whens) if whens else None


def run_loop_until_idle(loop: asyncio.AbstractEventLoop, deadline: float, horizon_s: float,
                        stop=lambda: False) -> bool:
    """Run `loop` until it has no ready callback and no timer due within the horizon.

    Returns whether any work ran. Raises TimerPastDeadline if a timer within the horizon is due after the deadline.
    """
    due = _next_timer(loop)
    worked = bool(loop._ready) or (due is not None and due <= loop.time() + horizon_s)  # type: ignore[attr-defined]

    async def until_idle() -> None:
        while True:
            await asyncio.sleep(0)
            if stop():
                return
            if loop._ready:  # type: ignore[attr-defined]
                continue
            due = _next_timer(loop)
            now = loop.time()
            if due is None or due > now + horizon_s:
                return
            if time.monotonic() + (due - now) > deadline:
                raise TimerPastDeadline(f"a timer is due in {due - now:.3f} s, past the deadline")
            await asyncio.sleep(max(0.0, due - now))

    if not worked:
        return False
    loop.run_until_complete(until_idle())
    return True


def call_in_loop(loop: asyncio.AbstractEventLoop, function, args: tuple):
    """Call `function(*args)` on this thread as a callback of `loop` would run: with the loop running.

    Inside the call `asyncio.get_running_loop()`, `create_task()` and `call_soon()` work, and what the
    call schedules stays pending for the next settle. No other callback runs meanwhile, so the call
    happens exactly when the kit makes it. Whatever it raises reaches the caller exactly as raised.
    """
    if loop.is_running():
        return function(*args)
    previous = asyncio.events._get_running_loop()
    loop._thread_id = threading.get_ident()  # type: ignore[attr-defined]  # what run_forever sets: is_running()
    asyncio.events._set_running_loop(loop)
    try:
        return function(*args)
    finally:
        asyncio.events._set_running_loop(previous)
        loop._thread_id = None  # type: ignore[attr-defined]


# How long a closing loop may take to let the tasks a check left behind finish their cancellation.
TASK_CANCEL_BOUND_S = 0.5


def close_loop(loop: asyncio.AbstractEventLoop) -> None:
    """Close a check's loop once the check is over, unless it is running still (a check given up inside one of
    its callbacks). First the tasks the check left on it are cancelled and let unwind (as asyncio.run does),
    within a bound: a task left pending on a closed loop would fail later, wherever it happens to be collected."""
    if loop.is_closed() or loop.is_running():
        return
    _cancel_leftover_tasks(loop)
    loop.close()


def _cancel_leftover_tasks(loop: asyncio.AbstractEventLoop) -> None:
    tasks = [task for task in asyncio.all_tasks(loop) if not task.done()]
    if not tasks:
        return
    for task in tasks:
        task.cancel()

    async def unwound() -> None:
        await asyncio.wait(tasks, timeout=TASK_CANCEL_BOUND_S)

    try:
        loop.run_until_complete(unwound())
    except BaseException:  # noqa: BLE001 - a task that misbehaves while cancelled is the target's business
        pass
