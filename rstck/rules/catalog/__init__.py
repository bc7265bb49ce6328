"""The rule catalogue: every normative item of every spec, loaded from the TOML files here."""

from __future__ import annotations

import dataclasses
import fnmatch
import functools
import tomllib
from importlib import resources

from ...verdict import LEVEL_GROUPS, LEVEL_VERDICTS, BadInput


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

    @property
    def is_must(self) -> bool:
        return self.level in ("MUST", "MUST NOT", "REQUIRED", "SHALL")

    @property
    def level_marker(self) -> str:
        """The pytest marker of this level: must, should or may."""
        return LEVEL_GROUPS[self.level].lower()


class Catalog:
    def __init__(self, items: list[Item]):
        self.items = items
        self._by_id = {item.id: item for item in items}

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

    def select(self, patterns: str | None) -> list[Item]:
        """Items matching a comma-separated list of ids or globs ("1.*,3.9"), minus those a `!` excludes
        ("*,!2.12"; exclusions alone start from every item); all for None."""
        if not patterns:
            return list(self.items)
        parts = [p.strip() for p in patterns.split(",") if p.strip()]
        included = [p for p in parts if not p.startswith("!")]
        chosen = {} if included else dict(self._by_id)
        for pattern in included:
            chosen.update((i.id, i) for i in self._matching(pattern))
        for pattern in (p[1:].strip() for p in parts if p.startswith("!")):
            for item in self._matching(pattern):
                chosen.pop(item.id, None)
        if not chosen:
            raise BadInput(f"--rules: {patterns!r} leaves no catalogue item to check")
        return [i for i in self.items if i.id in chosen]

    def _matching(self, pattern: str) -> list[Item]:
        matched = [i for i in self.items if fnmatch.fnmatchcase(i.id, pattern)]
        if not matched:
            raise BadInput(f"--rules: {pattern!r} matches no catalogue item; `rstck rules` lists the ids")
        return matched


CORE_CATALOG = "reactive-streams.toml"


@functools.cache
def load_catalog() -> Catalog:
    items: list[Item] = []
    # The core profile first, then the others by name: listings and reports read in that order.
    for entry in sorted(resources.files(__package__).iterdir(), key=lambda e: (e.name != CORE_CATALOG, e.name)):
        if not entry.name.endswith(".toml"):
            continue
        data = tomllib.loads(entry.read_text(encoding="utf-8"))
        spec, url = data["spec"]["name"], data["spec"].get("url", "")
        for raw in data["item"]:
            items.append(Item(spec=spec, url=url, **raw))
    return Catalog(items)
