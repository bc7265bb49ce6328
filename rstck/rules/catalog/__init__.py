"""The rule catalogue: every normative item of every spec, loaded from the TOML files here."""

from __future__ import annotations

import dataclasses
import fnmatch
import functools
import tomllib
from importlib import resources

from ...verdict import LEVEL_VERDICTS, BadInput


@dataclasses.dataclass(frozen=True)
class Item:
    id: str
    spec: str
    section: str
    level: str
    text: str
    intent: str = ""
    parent: str = ""

    @property
    def is_must(self) -> bool:
        return self.level in ("MUST", "MUST NOT", "REQUIRED", "SHALL")

    @property
    def level_marker(self) -> str:
        """The pytest marker of this level: must, should or may."""
        verdict = LEVEL_VERDICTS[self.level].value
        return {"fail": "must", "warn": "should", "unsupported": "may"}[verdict]


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
        """Items matching a comma-separated list of ids or globs ("1.*,3.9"); all for None."""
        if not patterns:
            return list(self.items)
        chosen: dict[str, Item] = {}
        for pattern in (p.strip() for p in patterns.split(",")):
            if not pattern:
                continue
            matched = [i for i in self.items if fnmatch.fnmatchcase(i.id, pattern)]
            if not matched:
                raise BadInput(f"--rules: {pattern!r} matches no catalogue item; `rstck rules` lists the ids")
            chosen.update((i.id, i) for i in matched)
        return [i for i in self.items if i.id in chosen]


@functools.cache
def load_catalog() -> Catalog:
    items: list[Item] = []
    for entry in sorted(resources.files(__package__).iterdir(), key=lambda e: e.name):
        if not entry.name.endswith(".toml"):
            continue
        data = tomllib.loads(entry.read_text(encoding="utf-8"))
        spec = data["spec"]["name"]
        for raw in data["item"]:
            items.append(Item(spec=spec, **raw))
    return Catalog(items)
