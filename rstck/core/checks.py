"""Checks: plain functions decorated with @rule("3.9"), one module per section of a profile's spec.

The decorator only registers; `all_checks()` imports every installed profile's check modules
(rstck/core/plugins.py) and validates each check against the catalogue. Items without a check are declared
`untested` with the reason, next to the checks of their section.
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Iterable
from typing import Callable

from rstck.core.catalog import load_catalog
from rstck.core.plugins import Profile, profile_of_module, profiles
from rstck.core.verdict import BadInput

SESSION = "session"  # a check's context when its profile names none: the check's session (probes, factories)


@dataclasses.dataclass(frozen=True)
class Check:
    rule: str
    name: str
    func: Callable[..., None]
    needs: frozenset[str]
    role: str  # its section (the module's first name within its profile), or what its decorator says
    subject: str = "publisher"  # what is under test: the first of its profile's subjects it needs
    context: str = SESSION  # what the check is called with, supplied by the target's adapter (Target.context)

    @property
    def id(self) -> str:
        return f"{self.rule}/{self.name}"

    @property
    def doc(self) -> str:
        return (self.func.__doc__ or "").strip().split("\n\n")[0]


@dataclasses.dataclass(frozen=True)
class _Registered:
    rule: str
    func: Callable[..., None]
    needs: frozenset[str] | None
    role: str | None


_REGISTERED: list[_Registered] = []
UNTESTED: dict[str, str] = {}


def rule(rule_id: str, *, needs: set[str] | frozenset[str] | None = None, role: str | None = None):
    """Register the decorated function as a check of catalogue item `rule_id`: it needs `needs` of a target (by
    default what its profile says its section's checks need) and shows as `role` (by default its section)."""

    def register(func: Callable[..., None]) -> Callable[..., None]:
        _REGISTERED.append(_Registered(rule_id, func, frozenset(needs) if needs is not None else None, role))
        return func

    return register


def untested(rule_id: str, reason: str) -> None:
    """Declare that catalogue item `rule_id` has no executable check, and why."""
    UNTESTED[rule_id] = reason


def _check(registered: _Registered) -> Check:
    module = registered.func.__module__
    profile = profile_of_module(module)
    if profile is None:
        raise BadInput(f"check {module}.{registered.func.__name__} ({registered.rule}) is in no installed "
                       "profile's package")
    section = profile.section_of(module)
    needs = registered.needs if registered.needs is not None else profile.section_needs.get(section, frozenset())
    return Check(registered.rule, registered.func.__name__, registered.func, needs, registered.role or section,
                 profile.subject_of(needs), profile.contexts.get(section, profile.context))


def import_checks(profile: Profile) -> None:
    for module in profile.checks:
        importlib.import_module(f"{profile.package}.{module}")


def all_checks(of: Iterable[Profile] | None = None) -> list[Check]:
    """Every registered check (of the profiles `of`, None: of every installed profile), in catalogue order; each
    must name a catalogue item. Only the profiles asked for have their check modules imported."""
    wanted = list(profiles() if of is None else of)
    for profile in wanted:
        import_checks(profile)
    catalog = load_catalog()
    checks = [check for check in map(_check, _REGISTERED) if any(p.owns(check.func.__module__) for p in wanted)]
    for check in checks:
        catalog[check.rule]  # raises BadInput naming an unknown id
    order = {item.id: n for n, item in enumerate(catalog.items)}
    return sorted(checks, key=lambda c: order[c.rule])
