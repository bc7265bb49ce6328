"""Which checks run against a target: shared by the CLI and the pytest plugin."""

from __future__ import annotations

import dataclasses
from typing import Any

from rstck.core.catalog import ALL_PROFILE, DEFAULT_PROFILE, Item, load_catalog
from rstck.core.checks import UNTESTED, Check, all_checks
from rstck.core.plugins import Profile, profile_of_module, profiles
from rstck.core.target import Target


@dataclasses.dataclass(frozen=True)
class Planned:
    check: Check
    target: Target
    view: str = ""  # "as publisher" / "as subscriber" when a processor is checked in one role

    @property
    def id(self) -> str:
        return f"{self.view.replace(' ', '_')}/{self.check.id}" if self.view else self.check.id


def planned_info(planned: Planned) -> dict[str, Any]:
    """A planned check as plain data, for the supervisor that never loads the target: what its progress line and,
    should its worker die in it, its error row say."""
    item = load_catalog()[planned.check.rule]
    return {"rule": planned.check.rule, "check": planned.check.name, "role": planned.check.role,
            "level": item.level, "spec": item.spec, "view": planned.view, "target": planned.target.name,
            "implementation": getattr(planned.target, "base", planned.target).name}


def all_subjects() -> tuple[str, ...]:
    """Every subject of every installed profile, in the profiles' order."""
    return tuple(dict.fromkeys(subject for profile in profiles() for subject in reversed(profile.subjects)))


def served_subjects(target: Target) -> list[str]:
    return [s for s in all_subjects() if s in target.capabilities]


def plan(target: Target, *, rules: str | None = None, subjects: frozenset[str] | None = None,
         profile: str = DEFAULT_PROFILE) -> list[Planned]:
    """Checks of the selected rules of `profile` whose subject the target serves (and `subjects` allows), and
    those a profile runs against the target in another subject's role (the core profile's processor views)."""
    catalog = load_catalog()
    selected = {item.id for item in catalog.select(rules, profile)}
    wanted = set(served_subjects(target)) & set(subjects or all_subjects())
    checks = [check for check in all_checks(_concerning(target, profile)) if check.rule in selected]
    planned = [Planned(check, target) for check in checks if check.subject in wanted]
    for owner in profiles():
        views = owner.checked_as(target, wanted) if owner.checked_as is not None else {}
        planned += [Planned(check, views[check.subject], f"as {check.subject}") for check in checks
                    if check.subject in views and profile_of_module(check.func.__module__) is owner]
    return planned


def _concerning(target: Target, profile: str) -> list[Profile]:
    """The profiles a run of `target` under `profile` needs the checks of: those with a subject the target serves
    or one of its kind may serve (a profile that concerns neither has nothing to run or to tell), less the opt-in
    ones the run is not of (an opt-in profile's checks run in a run of it, or of all). A profile's checks may
    decide items of another's catalogue (the network profile's wire checks of 3.12), so the selection does not
    narrow it further."""
    subjects = set(target.capabilities) | set(target.may_serve)
    opt_in = load_catalog().opt_in
    return [p for p in profiles() if subjects & set(p.subjects)
            and (p.name not in opt_in or profile in (p.name, ALL_PROFILE))]


def unserved(target: Target, *, rules: str | None = None, profile: str = DEFAULT_PROFILE) -> dict[str, int]:
    """How many selected checks each subject the target does not serve would have had: of the subjects a target
    of its kind may serve (Target.may_serve), so that an in-process target is not told that it offers no network
    server, nor a server that it offers no subscriber."""
    selected = {item.id for item in load_catalog().select(rules, profile)}
    served = set(served_subjects(target))
    for owner in profiles():  # a subject served through another's role (a processor as publisher) is served
        if owner.checked_as is not None:
            served |= set(owner.checked_as(target, served))
    counts: dict[str, int] = {}
    for check in all_checks(_concerning(target, profile)):
        if check.rule in selected and check.subject in target.may_serve and check.subject not in served:
            counts[check.subject] = counts.get(check.subject, 0) + 1
    return counts


def untested_items(rules: str | None = None, *, specs: set[str] | None = None) -> list[tuple[Item, str]]:
    """The selected items declared untested, with the reason: of the profiles named `specs` (None: every one)."""
    all_checks(p for p in profiles() if specs is None or p.name in specs)  # check modules declare them on import
    return [(item, UNTESTED[item.id]) for item in load_catalog().select(rules) if item.id in UNTESTED]


def untested_by_spec(target: Target, *, rules: str | None = None,
                     profile: str = DEFAULT_PROFILE) -> dict[str, dict[str, str]]:
    """What `untested_items` says of each profile a run of `target` imported the checks of (each declares its own
    catalogue's items): the planning worker hands it to the supervisor, which then imports no check module."""
    names = {p.name for p in _concerning(target, profile)}
    found: dict[str, dict[str, str]] = {name: {} for name in names}
    for item, reason in untested_items(rules, specs=names):
        if item.spec in found:
            found[item.spec][item.id] = reason
    return found
