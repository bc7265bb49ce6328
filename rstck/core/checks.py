"""Rule checks: plain functions decorated with @rule("3.9"), one module per spec section.

The decorator only registers; `all_checks()` imports the rule modules and validates
every check against the catalogue. Items without a check are declared `untested`
with the reason, next to the checks of their section.
"""

from __future__ import annotations

import dataclasses
import importlib
from typing import Callable

from rstck.core.catalog import load_catalog

# The modules that hold checks, in report order.
RULE_MODULES = (
    "rstck.rules.reactive_streams.publisher",
    "rstck.rules.reactive_streams.subscriber",
    "rstck.rules.reactive_streams.subscription",
    "rstck.rules.reactive_streams.processor",
    *(f"rstck.rules.network.{side}.{section}" for side in ("server", "client")
      for section in ("transport", "framing", "negotiation", "core", "packed", "split", "closing")),
    # The opt-in spi-draft profile (rstck/rules/spi_draft/): planned only under --profile spi-draft or all.
    *(f"rstck.rules.spi_draft.{section}" for section in ("subscribe", "request_more", "cancel", "publisher",
                                                         "on_next", "on_terminal", "subscriber", "processor",
                                                         "generally")),
    # The Node stream contract (rstck/rules/node_stream/) and the JSGI stream extension (rstck/rules/jsgi/).
    *(f"rstck.rules.node_stream.{section}" for section in ("base", "writable", "readable", "filter", "duplex",
                                                           "guidelines")),
    *(f"rstck.rules.jsgi.{section}" for section in ("spec", "methods", "events", "timing", "readwrite")),
)

# The subjects of a node-stream target: the factory each check needs (rstck/adapters/node/streams.py).
STREAM_SUBJECTS = ("stream", "readable", "writable", "filter", "duplex", "jsgi")

# What a check needs from a target, by the role its module covers.
_DEFAULT_NEEDS = {
    "publisher": frozenset({"publisher"}),
    "subscription": frozenset({"publisher"}),
    "subscriber": frozenset({"subscriber"}),
    "processor": frozenset({"processor"}),
    # The network profile (rstck/rules/network/<side>/<section>.py): the side of the connection under test.
    "server": frozenset({"server"}),
    "client": frozenset({"client"}),
    # The spi-draft profile's sections about a publisher and its subscription.
    "subscribe": frozenset({"publisher"}),
    "request_more": frozenset({"publisher"}),
    "cancel": frozenset({"publisher"}),
    "on_next": frozenset({"subscriber"}),
    "on_terminal": frozenset({"subscriber"}),
}


@dataclasses.dataclass(frozen=True)
class Check:
    rule: str
    name: str
    func: Callable[..., None]
    needs: frozenset[str]
    role: str  # publisher, subscriber, subscription, processor (the spec section's module); server or client

    @property
    def id(self) -> str:
        return f"{self.rule}/{self.name}"

    @property
    def subject(self) -> str:
        """What is under test: publisher, subscriber, processor, or a network server or client."""
        for subject in ("server", "client", "processor", "subscriber", *STREAM_SUBJECTS):
            if subject in self.needs:
                return subject
        return "publisher"

    @property
    def doc(self) -> str:
        return (self.func.__doc__ or "").strip().split("\n\n")[0]


_CHECKS: list[Check] = []
UNTESTED: dict[str, str] = {}


def rule(rule_id: str, *, needs: set[str] | frozenset[str] | None = None, role: str | None = None):
    """Register the decorated function as a check of catalogue item `rule_id` (`role`: the marker of its
    section, by default its module's name)."""

    def register(func: Callable[..., None]) -> Callable[..., None]:
        path = func.__module__.split(".")
        section = role or (path[-2] if "network" in path else path[-1])
        chosen = frozenset(needs) if needs is not None else _DEFAULT_NEEDS.get(section, frozenset())
        _CHECKS.append(Check(rule_id, func.__name__, func, chosen, section))
        return func

    return register


def untested(rule_id: str, reason: str) -> None:
    """Declare that catalogue item `rule_id` has no executable check, and why."""
    UNTESTED[rule_id] = reason


def all_checks() -> list[Check]:
    """Every registered check, in catalogue order; each must name a catalogue item."""
    for module in RULE_MODULES:
        importlib.import_module(module)
    catalog = load_catalog()
    for check in _CHECKS:
        catalog[check.rule]  # raises BadInput naming an unknown id
    order = {item.id: n for n, item in enumerate(catalog.items)}
    return sorted(_CHECKS, key=lambda c: order[c.rule])
