"""How a target maps the early SPI draft's names (docs/spi-draft.md): set as `target.spi_draft`."""

from __future__ import annotations

import dataclasses
from typing import Any


@dataclasses.dataclass(frozen=True)
class DraftNames:
    """The name of a target's `requestMore`, and the class names its Java exceptions are matched by (a base class
    name matches too). `rstck.DraftProfile` is its former name."""

    request_more: str = "request_more"  # a target built on the final spec: "request"
    illegal_state: str = "RuntimeError"  # java.lang.IllegalStateException
    illegal_argument: str = "ValueError"  # java.lang.IllegalArgumentException


def draft_names(target: Any) -> DraftNames:
    """The target's `spi_draft` names; the draft's own when it sets none."""
    names = getattr(target, "spi_draft", None)
    return names if isinstance(names, DraftNames) else DraftNames()
