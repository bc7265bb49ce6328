"""A reference implementation of the early SPI draft (the spi-draft profile), and targets to load it:
`rstck check rstck.reference.spi_draft:draft_publisher --profile spi-draft` (also `draft_subscriber`,
`draft_processor`).

The draft's Java exceptions are Python's by the profile's mapping: IllegalStateException is
`IllegalStateError` (a RuntimeError), IllegalArgumentException is ValueError. Not an implementation of the
final spec: it throws where the final spec signals onError or does nothing (3.6, 3.7, 3.9), never calls
onSubscribe once it has ended (1.9), and schedules every signal it receives (2.2 makes that optional).
"""

from __future__ import annotations

from rstck import InProcessTarget
from rstck.reference.spi_draft.processor import DraftProcessor, DraftProcessorSubscription
from rstck.reference.spi_draft.publisher import MAX_TOTAL_DEMAND, DraftPublisher, DraftSubscription, IllegalStateError
from rstck.reference.spi_draft.subscriber import DraftSubscriber

__all__ = ["DraftProcessor", "DraftProcessorSubscription", "DraftPublisher", "DraftSubscriber", "DraftSubscription",
           "IllegalStateError", "MAX_TOTAL_DEMAND", "draft_processor", "draft_publisher", "draft_subscriber"]


def _failure() -> BaseException:
    return RuntimeError("the reference draft publisher fails on purpose")


draft_publisher = InProcessTarget(
    create_publisher=lambda n: DraftPublisher(range(n)),
    create_failed_publisher=lambda: DraftPublisher((), error=_failure()),
    name="reference SPI draft publisher",
)

draft_processor = InProcessTarget(
    create_processor=lambda: DraftProcessor(draft_processor.executor),
    name="reference SPI draft processor",
)

# It cancels after five elements with demand pending, so that spi.subscriber.3-5 can be observed.
draft_subscriber = InProcessTarget(
    create_whitebox_subscriber=lambda observer: DraftSubscriber(draft_subscriber.executor, max_items=5,
                                                                observer=observer),
    name="reference SPI draft subscriber",
)
