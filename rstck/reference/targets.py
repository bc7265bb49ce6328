"""Ready-made targets for the reference implementations: `rstck check rstck.reference.targets:sync_publisher`."""

from __future__ import annotations

from rstck import DraftNames, InProcessTarget
from rstck.reference.processors import MapProcessor
from rstck.reference.publishers import AsyncioPublisher, ExecutorPublisher, FailedPublisher, IterablePublisher
from rstck.reference.subscribers import BufferedSubscriber, SyncSubscriber


def _failure() -> BaseException:
    return RuntimeError("the reference failed publisher fails on purpose")


sync_publisher = InProcessTarget(
    create_publisher=lambda n: IterablePublisher(range(n)),
    create_failed_publisher=lambda: FailedPublisher(_failure),
    name="reference sync publisher",
)

threaded_publisher = InProcessTarget(
    create_publisher=lambda n: ExecutorPublisher(range(n), threaded_publisher.executor),
    create_failed_publisher=lambda: FailedPublisher(_failure),
    name="reference threaded publisher",
)

asyncio_publisher = InProcessTarget(
    create_publisher=lambda n: AsyncioPublisher(range(n), asyncio_publisher.loop),
    create_failed_publisher=lambda: FailedPublisher(_failure),
    name="reference asyncio publisher",
)

# The buffered subscriber cancels after five elements (2.6), with demand still pending, which
# lets 2.8 be observed; it reports each processed signal to the kit's observer (white box).
buffered_subscriber = InProcessTarget(
    create_whitebox_subscriber=lambda observer: BufferedSubscriber(buffer_size=8, max_items=5, observer=observer),
    name="reference buffered subscriber",
)

sync_subscriber = InProcessTarget(
    create_whitebox_subscriber=lambda observer: SyncSubscriber(request_batch=4, observer=observer),
    name="reference sync subscriber",
)

map_processor = InProcessTarget(
    create_processor=lambda: MapProcessor(),
    name="reference identity processor",
)

# Under the opt-in spi-draft profile (docs/spi-draft.md) these final-spec targets call `request` the
# draft's requestMore; no check of the default profile reads it.
for _final in (sync_publisher, threaded_publisher, asyncio_publisher, map_processor, buffered_subscriber,
               sync_subscriber):
    _final.spi_draft = DraftNames(request_more="request")
del _final  # not a target of its own
