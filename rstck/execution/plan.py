"""Which checks run against a target: shared by the CLI and the pytest plugin."""

from __future__ import annotations

import dataclasses

from rstck.core.checks import STREAM_SUBJECTS, UNTESTED, Check, all_checks
from rstck.core.catalog import DEFAULT_PROFILE, Item, load_catalog
from rstck.core.target import Target
from rstck.rules.reactive_streams.views import ProcessorAsPublisher, ProcessorAsSubscriber

SUBJECTS = ("publisher", "subscriber", "processor", "server", "client", *STREAM_SUBJECTS)
# A run reports the subjects not served only within the kind of target it concerns: an in-process target is not
# told that it offers no network server, nor a server that it offers no client or subscriber.
_NETWORK_SUBJECTS = {"server", "client"}
# Nor is a Node streams target told that it offers no publisher, or a Reactive Streams target no Node stream.
_NODE_STREAM_SUBJECTS = set(STREAM_SUBJECTS)


@dataclasses.dataclass(frozen=True)
class Planned:
    check: Check
    target: Target
    view: str = ""  # "as publisher" / "as subscriber" when a processor is checked in one role

    @property
    def id(self) -> str:
        return f"{self.view.replace(' ', '_')}/{self.check.id}" if self.view else self.check.id


def served_subjects(target: Target) -> list[str]:
    return [s for s in SUBJECTS if s in target.capabilities]


def plan(target: Target, *, rules: str | None = None, subjects: frozenset[str] | None = None,
         profile: str = DEFAULT_PROFILE) -> list[Planned]:
    """Checks of the selected rules of `profile` whose subject the target serves (and `subjects` allows)."""
    catalog = load_catalog()
    selected = {item.id for item in catalog.select(rules, profile)}
    wanted = set(served_subjects(target)) & set(subjects or SUBJECTS)
    checks = [check for check in all_checks() if check.rule in selected]
    planned = [Planned(check, target) for check in checks if check.subject in wanted]
    if "processor" in wanted:  # 4.1: every publisher and subscriber check, against the processor in that role
        views = {"publisher": ProcessorAsPublisher(target), "subscriber": ProcessorAsSubscriber(target)}
        # An opt-in profile's checks are not run through these views: their upstream speaks the core's calls.
        planned += [Planned(check, views[check.subject], f"as {check.subject}")
                    for check in checks if check.subject in views and catalog[check.rule].spec not in catalog.opt_in]
    return planned


def unserved(target: Target, *, rules: str | None = None, profile: str = DEFAULT_PROFILE) -> dict[str, int]:
    """How many selected checks each subject the target does not serve would have had."""
    selected = {item.id for item in load_catalog().select(rules, profile)}
    served = set(served_subjects(target))
    if "processor" in served:
        served |= {"publisher", "subscriber"}  # the processor is checked in both roles
    network = bool(served & _NETWORK_SUBJECTS)
    streams = bool(served & _NODE_STREAM_SUBJECTS)
    counts: dict[str, int] = {}
    for check in all_checks():
        if check.rule in selected and check.subject not in served and not network \
                and check.subject not in _NETWORK_SUBJECTS and (check.subject in _NODE_STREAM_SUBJECTS) == streams:
            counts[check.subject] = counts.get(check.subject, 0) + 1
    return counts


def untested_items(rules: str | None = None) -> list[tuple[Item, str]]:
    all_checks()  # rule modules declare their untested items when imported
    return [(item, UNTESTED[item.id]) for item in load_catalog().select(rules) if item.id in UNTESTED]
