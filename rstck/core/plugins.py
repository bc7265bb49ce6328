"""Profiles and adapters are plug-ins: each describes itself in one object that the kit finds through an entry
point, so that a profile or an adapter can ship in a package of its own and nothing in the kit names one.

    [project.entry-points."rstck.profiles"]
    my-spec = "my_package.rules:PROFILE"        # a Profile
    [project.entry-points."rstck.adapters"]
    my-kind = "my_package.adapter:ADAPTER"      # an Adapter

The objects are small and their modules light: the kit reads every installed one to plan a run, and imports a
profile's checks or an adapter's loader only when a run needs them (docs/architecture.md).
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import re
import sys
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from rstck.core.install_cache import cached, installed_distributions_stamp
from rstck.core.verdict import BadInput

if TYPE_CHECKING:
    from rstck.core.target import Target

PROFILES_GROUP = "rstck.profiles"
ADAPTERS_GROUP = "rstck.adapters"


@dataclasses.dataclass(frozen=True)
class Profile:
    """One specification the kit checks: its catalogue (`catalogue.toml` in `package`), its checks (the modules
    `checks`, within `package`, in report order) and how its items show in runs.

    `subjects` are the capabilities of a target its checks are about, most specific first: a check is about the
    first of them it needs, else the last (a processor check needs a processor; a check that needs a failed
    publisher is about a publisher). `section_needs` says what a check needs when its decorator does not, by its
    section: the first part of its module's name within `package`. `context` names what its checks are
    called with (`contexts`: by section): the check's session (probes, factories, settling) by default, else
    something the adapter of the target supplies (Target.context), such as a network server's connections.
    `markers` are the pytest markers its items may carry, with their help; every item carries `marker`.
    `order` places the profile in listings and reports (the core profile first). `checked_as(target, subjects)`
    lets a target serving some of `subjects` be checked in another subject's role, by a view of it per role:
    the core profile checks a processor as a publisher and as a subscriber (4.1). `fuzzed_roles` are the roles
    of the fuzzer's state machines (rstck/fuzz) whose findings are its items; `reproduced_in` the reproducer
    languages (rstck/reports/repro) whose scripts judge its items; `exports` the names it offers as `rstck.NAME`,
    each with the module that defines it."""

    name: str  # the catalogue's spec name
    title: str
    package: str
    checks: tuple[str, ...]
    subjects: tuple[str, ...]
    marker: str | None = None
    markers: Mapping[str, str] = dataclasses.field(default_factory=dict)
    section_needs: Mapping[str, frozenset[str]] = dataclasses.field(default_factory=dict)
    context: str = "session"
    contexts: Mapping[str, str] = dataclasses.field(default_factory=dict)
    order: int = 100
    checked_as: Callable[[Target, set[str]], dict[str, Target]] | None = None
    fuzzed_roles: tuple[str, ...] = ()
    reproduced_in: tuple[str, ...] = ()
    exports: Mapping[str, str] = dataclasses.field(default_factory=dict)

    def subject_of(self, needs: frozenset[str]) -> str:
        return next((subject for subject in self.subjects if subject in needs), self.subjects[-1])

    def section_of(self, module: str) -> str:
        """The section of the check module `module`: its first name within the profile's package."""
        return module[len(self.package) + 1:].split(".")[0]

    def item_markers(self) -> dict[str, str]:
        """The pytest markers its items carry, with their help: its own, its subjects' and its sections' (the
        help `markers` gives, else a line naming the profile)."""
        named = [self.marker] if self.marker else []
        named += [*reversed(self.subjects), *dict.fromkeys(module.split(".")[0] for module in self.checks)]
        found = {name: f"{self.title}: its {name} checks" for name in named}
        return {**found, **self.markers}

    def owns(self, module: str) -> bool:
        return module == self.package or module.startswith(self.package + ".")


@dataclasses.dataclass(frozen=True)
class TargetOption:
    """A command-line option of `rstck check` that an adapter adds: `--client CMD` names a target as
    `prefix` + CMD; `--spark-master URL` sets `env` for the worker that loads the target."""

    flag: str
    metavar: str
    help: str
    prefix: str = ""  # the value names the target: prefix + value
    env: str = ""  # the value is handed to the target through this environment variable


@dataclasses.dataclass(frozen=True)
class Adapter:
    """One kind of implementation the kit can test. `schemes` are the target-string prefixes it loads
    (`tcp://`); an adapter with none is reached as MODULE:ATTR, a Target the user's module builds. `loader` is
    "module:function", imported only when a target of its scheme is loaded: function(spec) -> Target, BadInput
    saying what to fix. `describes` tells the user in `rstck check --help` what its target strings look like.
    `rerun(spec)` is the `rstck check` arguments that name the target again (the reports' commands): by
    default the spec itself. `reproducers` names, per scheme, the reproducer language (rstck/reports/repro) of
    the targets it names, the key "" standing for MODULE:ATTR; a scheme it leaves out gets no reproducer.
    `exports` are the names it offers as `rstck.NAME`, each with the module that defines it."""

    name: str
    schemes: tuple[str, ...] = ()
    loader: str = ""
    describes: str = ""
    options: tuple[TargetOption, ...] = ()
    rerun: Callable[[str], list[str]] | None = None
    reproducers: Mapping[str, str] = dataclasses.field(default_factory=dict)
    exports: Mapping[str, str] = dataclasses.field(default_factory=dict)

    def takes(self, spec: str) -> bool:
        return any(spec.startswith(scheme) for scheme in self.schemes)

    def scheme_of(self, spec: str) -> str:
        """The longest of its schemes that `spec` starts with ("" if none)."""
        return max((scheme for scheme in self.schemes if spec.startswith(scheme)), key=len, default="")

    def load(self, spec: str) -> Target:
        module, _, function = self.loader.partition(":")
        return getattr(importlib.import_module(module), function)(spec)

    def command_arguments(self, spec: str) -> list[str]:
        return self.rerun(spec) if self.rerun is not None else [spec]


@dataclasses.dataclass(frozen=True)
class _EntryPoint:
    """An installed plug-in: its name and where its object is ("module:attribute")."""

    name: str
    value: str

    def load(self) -> Any:
        module, _, attribute = self.value.partition(":")
        loaded = importlib.import_module(module.strip())
        for part in attribute.strip().split(".") if attribute.strip() else ():
            loaded = getattr(loaded, part)
        return loaded


def _read_entry_points() -> dict[str, list[tuple[str, str]]]:
    from importlib import metadata  # costly to import: only when the installation changed

    return {group: sorted((entry.name, entry.value) for entry in metadata.entry_points(group=group))
            for group in (PROFILES_GROUP, ADAPTERS_GROUP)}


def _entry_points(group: str) -> list[_EntryPoint]:
    # One entry per interpreter and import path: `python -m`, `-c` and a script's directory see different ones.
    found = cached("entry-points", (sys.executable, tuple(sys.path)), installed_distributions_stamp(),
                   _read_entry_points)
    return [_EntryPoint(name, value) for name, value in found[group]]


def _load(entry: _EntryPoint, kind: type) -> Any:
    try:
        loaded = entry.load()
    except Exception as exc:
        raise BadInput(f"the {kind.__name__.lower()} plug-in {entry.name!r} ({entry.value}) cannot be loaded: "
                       f"{type(exc).__name__}: {exc}") from exc
    if not isinstance(loaded, kind):
        raise BadInput(f"the {kind.__name__.lower()} plug-in {entry.name!r} ({entry.value}) is a "
                       f"{type(loaded).__name__}, not an rstck.core.plugins.{kind.__name__}")
    return loaded


@functools.cache
def profiles() -> tuple[Profile, ...]:
    """Every installed profile, in report order."""
    found = [_load(entry, Profile) for entry in _entry_points(PROFILES_GROUP)]
    if not found:
        raise BadInput("no rstck profile is installed: install rstck (pip install rstck, or pip install -e . in "
                       "a clone), whose entry points name them")
    names = [p.name for p in found]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise BadInput(f"two installed profiles are named {', '.join(twice)}")
    return tuple(sorted(found, key=lambda p: (p.order, p.name)))


def profile_named(name: str) -> Profile:
    for profile in profiles():
        if profile.name == name:
            return profile
    raise BadInput(f"no installed profile is named {name!r}")


def profile_of_module(module: str) -> Profile | None:
    """The profile whose package holds `module` (a check module), or None."""
    return next((p for p in profiles() if p.owns(module)), None)


@functools.cache
def adapters() -> tuple[Adapter, ...]:
    """Every installed adapter."""
    return tuple(_load(entry, Adapter) for entry in _entry_points(ADAPTERS_GROUP))


def adapter_for(spec: str) -> Adapter | None:
    """The adapter whose scheme `spec` starts with (the longest that matches), or None: MODULE:ATTR."""
    matching = [(len(a.scheme_of(spec)), a) for a in adapters() if a.takes(spec)]
    return max(matching, key=lambda pair: pair[0])[1] if matching else None


MODULE_ATTR = re.compile(r"[\w.]+:[\w.]+")


def reproducer_language(spec: str) -> str | None:
    """The reproducer language of the target `spec` names, as its adapter says (Adapter.reproducers); None: none."""
    adapter = adapter_for(spec)
    if adapter is not None:
        return adapter.reproducers.get(adapter.scheme_of(spec))
    if MODULE_ATTR.fullmatch(spec):
        return next((a.reproducers[""] for a in adapters() if "" in a.reproducers), None)
    return None


def profile_fuzzed_as(role: str) -> Profile:
    """The profile whose items the fuzzer's `role` machine judges (Profile.fuzzed_roles)."""
    claiming = [p for p in profiles() if role in p.fuzzed_roles]
    if len(claiming) != 1:
        said = ", ".join(p.name for p in claiming) or "none"
        raise BadInput(f"one installed profile must claim the fuzzer's {role} role (Profile.fuzzed_roles): {said}")
    return claiming[0]


def exported_names() -> dict[str, str]:
    """The names the installed plug-ins offer as `rstck.NAME`, each with its module (Profile/Adapter.exports)."""
    return {name: module for plugin in (*profiles(), *adapters()) for name, module in plugin.exports.items()}


def target_options() -> list[TargetOption]:
    return [option for adapter in adapters() for option in adapter.options]
