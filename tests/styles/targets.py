"""rstck targets for every style, by name: `rstck check tests.styles.targets:NAME`, where NAME is a style's name
(tests/styles/choices.py), e.g. `publisher__timer__queue_drain__on_worker__records_and_schedules`; a broken style
adds its defect: `...__records_and_schedules__demand_written_back`.

The attributes are made on first use (a module-level `__getattr__`); `fresh(style)` makes a new target.
"""

from __future__ import annotations

import rstck

from .choices import Style, exclusion, role_mismatch
from .processors import StyledProcessor
from .publishers import StyledPublisher
from .subscribers import subscriber_for

# A failed publisher of every style: on_subscribe, then on_error, with or without demand.
SOURCE_FAILURE = "the style's source fails on purpose"


def fresh(style: Style) -> rstck.InProcessTarget:
    """A new target serving `style` in its role; ValueError for a combination the matrix excludes, or a defect of
    another role's. A defect the broken matrix leaves out of a style (`choices.defect_exclusion`) is still built,
    for a look at why the kit does not catch it there in every run."""
    reason = exclusion(style)
    if reason is None and style.defect is not None:
        reason = role_mismatch(style.defect, style.role)
    if reason is not None:
        raise ValueError(f"{style.name} is not in the matrix: {reason}")
    if style.role == "publisher":
        target = rstck.InProcessTarget(
            create_publisher=lambda n: StyledPublisher(style, n, target),
            create_failed_publisher=lambda: StyledPublisher(style, 0, target, RuntimeError(SOURCE_FAILURE)),
            name=style.name)
    elif style.role == "subscriber":
        target = rstck.InProcessTarget(
            create_subscriber=lambda: subscriber_for(style, target),
            create_whitebox_subscriber=lambda observer: subscriber_for(style, target, observer),
            name=style.name)
    else:
        target = rstck.InProcessTarget(create_processor=lambda: StyledProcessor(style, target), name=style.name)
    return target


def __getattr__(name: str) -> rstck.InProcessTarget:
    if name.startswith("__"):
        raise AttributeError(name)
    try:
        style = Style.parse(name)
        target = fresh(style)
    except ValueError as exc:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}: {exc}") from None
    globals()[name] = target
    return target
