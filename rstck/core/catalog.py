"""The rule catalogue: every normative item of every spec, loaded from the TOML files here."""

from __future__ import annotations

import dataclasses
import fnmatch
import functools
import os
import pathlib
import sys

from rstck.core.install_cache import cached, file_stamp
from rstck.core.plugins import profiles
from rstck.core.verdict import LEVEL_GROUPS, LEVEL_VERDICTS, BadInput


@dataclasses.dataclass(frozen=True)
class Item:
    id: str
    spec: str
    section: str
    level: str
    text: str
    intent: str = ""
    parent: str = ""
    url: str = ""  # where the spec's text can be read (the catalogue's [spec] url)
    # An item of an earlier draft: the core rule it became, or the core rule that replaced it, or why none did.
    becomes: str = ""
    contradicts: str = ""
    dropped: str = ""

    @property
    def is_must(self) -> bool:
        return self.level in ("MUST", "MUST NOT", "REQUIRED", "SHALL")

    @property
    def final_spec(self) -> str:
        """What became of a draft item in the final spec, for listings and reports ("" for any other item)."""
        if self.becomes:
            return f"became {self.becomes}"
        if self.contradicts:
            return f"contradicts {self.contradicts}"
        return f"dropped: {self.dropped}" if self.dropped else ""

    @property
    def level_marker(self) -> str:
        """The pytest marker of this level: must, should or may."""
        return LEVEL_GROUPS[self.level].lower()


# Profiles: the default one is every catalogue not marked `opt_in` under [spec]; an opt-in catalogue is a
# profile of its own, named by its spec name; `all` is every item.
DEFAULT_PROFILE, ALL_PROFILE = "default", "all"


class Catalog:
    def __init__(self, items: list[Item], opt_in: frozenset[str] = frozenset()):
        self.items = items
        self._by_id = {item.id: item for item in items}
        self.opt_in = opt_in  # the spec names of the opt-in catalogues

    @property
    def profiles(self) -> list[str]:
        return [DEFAULT_PROFILE, *sorted(self.opt_in), ALL_PROFILE]

    def check_profile(self, profile: str) -> str:
        if profile not in self.profiles:
            raise BadInput(f"--profile: unknown profile {profile!r}; valid: {', '.join(self.profiles)}")
        return profile

    def profile_of(self, item: Item) -> str:
        return item.spec if item.spec in self.opt_in else DEFAULT_PROFILE

    def in_profile(self, item: Item, profile: str | None) -> bool:
        """Whether `item` runs under `profile` (None: every item, as `all`)."""
        return profile in (None, ALL_PROFILE) or self.profile_of(item) == profile

    def __contains__(self, rule_id: str) -> bool:
        return rule_id in self._by_id

    def __getitem__(self, rule_id: str) -> Item:
        try:
            return self._by_id[rule_id]
        except KeyError:
            raise BadInput(f"unknown rule id {rule_id!r}; `rstck rules` lists the catalogue") from None

    def most_severe(self, violations: list) -> object:
        """The violation whose item weighs most: a MUST item before a SHOULD before a MAY; the first
        recorded among equals."""
        order = ["fail", "warn", "unsupported"]
        return min(violations, key=lambda v: order.index(LEVEL_VERDICTS[self[v.rule].level].value))

    def select(self, patterns: str | None, profile: str | None = None) -> list[Item]:
        """Items matching a comma-separated list of ids or globs ("1.*,3.9"), minus those a `!` excludes
        ("*,!2.12"; exclusions alone start from every item); all for None. With a `profile`, only its items."""
        scope = [i for i in self.items if self.in_profile(i, self.check_profile(profile) if profile else None)]
        if not patterns:
            return scope
        parts = [p.strip() for p in patterns.split(",") if p.strip()]
        included = [p for p in parts if not p.startswith("!")]
        chosen = {} if included else {i.id: i for i in scope}
        for pattern in included:
            chosen.update((i.id, i) for i in self._matching(pattern, scope, profile))
        for pattern in (p[1:].strip() for p in parts if p.startswith("!")):
            for item in self._matching(pattern, self.items, None):
                chosen.pop(item.id, None)
        if not chosen:
            raise BadInput(f"--rules: {patterns!r} leaves no catalogue item to check")
        return [i for i in scope if i.id in chosen]

    def _matching(self, pattern: str, scope: list[Item], profile: str | None) -> list[Item]:
        matched = [i for i in scope if fnmatch.fnmatchcase(i.id, pattern)]
        if not matched:
            elsewhere = sorted({self.profile_of(i) for i in self.items if fnmatch.fnmatchcase(i.id, pattern)})
            if elsewhere:
                raise BadInput(f"--rules: {pattern!r} matches no item of profile {profile}; its items are in "
                               f"profile {', '.join(elsewhere)} (--profile {elsewhere[0]})")
            raise BadInput(f"--rules: {pattern!r} matches no catalogue item; `rstck rules` lists the ids")
        return matched


def _catalogue_of(package: str) -> dict:
    """The parsed catalogue.toml of a profile's package (kept between runs: rstck/core/install_cache.py)."""
    module = sys.modules.get(package)
    directory = os.path.dirname(module.__file__) if module is not None and getattr(module, "__file__", None) else ""
    path = os.path.join(directory, "catalogue.toml")
    if not directory or not os.path.isfile(path):  # a package that is no plain directory (a zip)
        from importlib import resources

        entry = resources.files(package) / "catalogue.toml"
        return _parsed(package, entry.read_text(encoding="utf-8"))
    return cached("catalogue", path, file_stamp(path),
                  lambda: _parsed(package, pathlib.Path(path).read_text(encoding="utf-8")))


def _parsed(package: str, text: str) -> dict:
    import tomllib  # only when the cache has no parsed catalogue (install_cache.py)

    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise BadInput(f"the catalogue {package}/catalogue.toml cannot be read: {exc}") from exc


@functools.cache
def load_catalog() -> Catalog:
    """Every installed profile's catalogue (its package's catalogue.toml), in the profiles' order."""
    items: list[Item] = []
    opt_in: set[str] = set()
    for profile in profiles():
        try:
            data = _catalogue_of(profile.package)
        except OSError as exc:
            raise BadInput(f"profile {profile.name!r}: its catalogue {profile.package}/catalogue.toml cannot be "
                           f"read: {exc}") from exc
        spec, url = data["spec"]["name"], data["spec"].get("url", "")
        if spec != profile.name:
            raise BadInput(f"profile {profile.name!r}: its catalogue names the spec {spec!r}")
        if data["spec"].get("opt_in", False):
            opt_in.add(spec)
        for raw in data["item"]:
            items.append(Item(spec=spec, url=url, **raw))
    return Catalog(items, frozenset(opt_in))
