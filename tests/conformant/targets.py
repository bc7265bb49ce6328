"""rstck targets for the conformant zoo: the kit must find every one of them conformant.

Each target is built by a function of its own, so that a test can have a fresh one per
use (`fresh(name)`); the module-level attributes are built once, for `rstck check
tests.conformant.targets:NAME`. This is the only module of the zoo that imports rstck.
"""

from __future__ import annotations

import rstck

from .processors import AsyncioIdentity, PrefetchingIdentity, UnicastIdentity
from .publishers import (AsyncioNative, AsyncioOwnLoop, AsyncioOwnLoopFailed, Bounded, Empty, LoggingDrainLoop,
                         PooledExecutor, PooledFailed, QueueWorker, ReplayMulticast, ReRaising, SyncFailed,
                         SyncTrampolined, ThreadPerRequest, TimerDelayed)
from .subscribers import AsyncioBatching, Batching, OneByOne, WorkerThread

# -- publishers ------------------------------------------------------------------------------


def _sync_trampolined():
    return rstck.InProcessTarget(create_publisher=lambda n: SyncTrampolined(n),
                                 create_failed_publisher=lambda: SyncFailed(), name="conformant sync trampolined")


def _thread_per_request():
    return rstck.InProcessTarget(create_publisher=lambda n: ThreadPerRequest(n),
                                 name="conformant thread per request")


def _queue_worker():
    return rstck.InProcessTarget(create_publisher=lambda n: QueueWorker(n), name="conformant queue worker")


def _timer_delayed():
    return rstck.InProcessTarget(create_publisher=lambda n: TimerDelayed(n), name="conformant timer delayed")


def _pooled_executor():
    return rstck.InProcessTarget(create_publisher=lambda n: PooledExecutor(n),
                                 create_failed_publisher=lambda: PooledFailed(), name="conformant pooled executor")


def _asyncio_native():
    return rstck.InProcessTarget(create_publisher=lambda n: AsyncioNative(n), name="conformant asyncio native")


def _asyncio_own_loop():
    return rstck.InProcessTarget(create_publisher=lambda n: AsyncioOwnLoop(n),
                                 create_failed_publisher=lambda: AsyncioOwnLoopFailed(),
                                 name="conformant asyncio own loop")


def _replay_multicast():
    return rstck.InProcessTarget(create_publisher=lambda n: ReplayMulticast(n), name="conformant replay multicast")


def _bounded():
    return rstck.InProcessTarget(create_publisher=lambda n: Bounded(n), max_elements=Bounded.CAPACITY,
                                 name="conformant bounded")


def _re_raising():
    return rstck.InProcessTarget(create_publisher=lambda n: ReRaising(n), name="conformant re-raising")


def _logging_drain_loop():
    return rstck.InProcessTarget(create_publisher=lambda n: LoggingDrainLoop(n),
                                 name="conformant logging drain loop")


def _empty():
    return rstck.InProcessTarget(create_publisher=lambda n: Empty(), max_elements=0, name="conformant empty")


# -- subscribers -----------------------------------------------------------------------------


def _batching():
    return rstck.InProcessTarget(create_subscriber=lambda: Batching(capacity=16),
                                 create_whitebox_subscriber=lambda observer: Batching(capacity=16, observer=observer),
                                 name="conformant batching subscriber")


def _batching_take_five():
    # Cancels of its own accord with demand pending, so that 2.8 gets a verdict.
    return rstck.InProcessTarget(create_subscriber=lambda: Batching(capacity=16, take=5),
                                 create_whitebox_subscriber=lambda observer: Batching(capacity=16, take=5,
                                                                                      observer=observer),
                                 name="conformant batching subscriber taking five")


def _one_by_one():
    return rstck.InProcessTarget(create_subscriber=lambda: OneByOne(),
                                 create_whitebox_subscriber=lambda observer: OneByOne(observer=observer),
                                 name="conformant one-by-one subscriber")


def _worker_thread():
    return rstck.InProcessTarget(create_subscriber=lambda: WorkerThread(window=4),
                                 create_whitebox_subscriber=lambda observer: WorkerThread(window=4, observer=observer),
                                 name="conformant worker-thread subscriber")


def _asyncio_batching():
    return rstck.InProcessTarget(create_subscriber=lambda: AsyncioBatching(capacity=8),
                                 create_whitebox_subscriber=lambda observer: AsyncioBatching(capacity=8,
                                                                                             observer=observer),
                                 name="conformant asyncio batching subscriber")


# -- processors ------------------------------------------------------------------------------


def _unicast_identity():
    return rstck.InProcessTarget(create_processor=lambda: UnicastIdentity(), name="conformant unicast identity")


def _prefetching_identity():
    return rstck.InProcessTarget(create_processor=lambda: PrefetchingIdentity(),
                                 name="conformant prefetching identity")


def _asyncio_identity():
    return rstck.InProcessTarget(create_processor=lambda: AsyncioIdentity(), name="conformant asyncio identity")


_BUILDERS = {
    "sync_trampolined": _sync_trampolined,
    "thread_per_request": _thread_per_request,
    "queue_worker": _queue_worker,
    "timer_delayed": _timer_delayed,
    "pooled_executor": _pooled_executor,
    "asyncio_native": _asyncio_native,
    "asyncio_own_loop": _asyncio_own_loop,
    "replay_multicast": _replay_multicast,
    "bounded": _bounded,
    "re_raising": _re_raising,
    "logging_drain_loop": _logging_drain_loop,
    "empty": _empty,
    "batching": _batching,
    "batching_take_five": _batching_take_five,
    "one_by_one": _one_by_one,
    "worker_thread": _worker_thread,
    "asyncio_batching": _asyncio_batching,
    "unicast_identity": _unicast_identity,
    "prefetching_identity": _prefetching_identity,
    "asyncio_identity": _asyncio_identity,
}

PUBLISHER_TARGETS = ["sync_trampolined", "thread_per_request", "queue_worker", "timer_delayed", "pooled_executor",
                     "asyncio_native", "asyncio_own_loop", "replay_multicast", "bounded", "re_raising",
                     "logging_drain_loop", "empty"]
SUBSCRIBER_TARGETS = ["batching", "batching_take_five", "one_by_one", "worker_thread", "asyncio_batching"]
PROCESSOR_TARGETS = ["unicast_identity", "prefetching_identity", "asyncio_identity"]

# Verdicts the kit is right to give: OneByOne asks for one element at a time, which 2.1
# RECOMMENDS against ("stop-and-wait"), so a warning there is correct. Every other
# target must get neither a failure nor a warning.
EXPECTED_WARNINGS = {"one_by_one": {"2.1.batch-demand"}}


def fresh(name: str) -> rstck.Target:
    """A newly built target for `name` (one of the *_TARGETS lists)."""
    build = _BUILDERS.get(name)
    if build is None:
        raise KeyError(f"no conformant target named {name!r}; known: {', '.join(_BUILDERS)}")
    return build()


sync_trampolined = fresh("sync_trampolined")
thread_per_request = fresh("thread_per_request")
queue_worker = fresh("queue_worker")
timer_delayed = fresh("timer_delayed")
pooled_executor = fresh("pooled_executor")
asyncio_native = fresh("asyncio_native")
asyncio_own_loop = fresh("asyncio_own_loop")
replay_multicast = fresh("replay_multicast")
bounded = fresh("bounded")
re_raising = fresh("re_raising")
logging_drain_loop = fresh("logging_drain_loop")
empty = fresh("empty")
batching = fresh("batching")
batching_take_five = fresh("batching_take_five")
one_by_one = fresh("one_by_one")
worker_thread = fresh("worker_thread")
asyncio_batching = fresh("asyncio_batching")
unicast_identity = fresh("unicast_identity")
prefetching_identity = fresh("prefetching_identity")
asyncio_identity = fresh("asyncio_identity")
