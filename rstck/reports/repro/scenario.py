"""A check's evidence as a scenario a script performs: the kit's objects, its operations in order, and what it did
from inside signals or on threads of its own, grouped where a script defines them (rstck/core/evidence.py says
what each operation is). Language-neutral: python.py and javascript.py write it out."""

from __future__ import annotations

import dataclasses
from typing import Any, Protocol

# The rules the scripts' recording subscriber and source judge on every signal and call, as rstck's probes do.
MONITORED = frozenset({"1.1", "1.3", "1.6", "1.7", "1.8", "1.9", "2.12", "2.3", "2.7", "3.1"})
# What the scripts' recording objects observe without help from the check.
CLAIMS_SEEN_BY_THE_SCRIPT = frozenset({"monitor", "call", "expectation", "hang", "wire"})


@dataclasses.dataclass
class Block:
    """Operations a script runs together: the scenario itself, what it does inside one signal (a reaction), or on
    a thread of the kit's."""

    name: str
    ops: list[dict[str, Any]] = dataclasses.field(default_factory=list)


@dataclasses.dataclass
class Scenario:
    objects: dict[str, dict[str, Any]]
    main: Block
    reactions: list[tuple[dict[str, Any], Block]]  # (anchor, block): recorder, kind of signal, its number
    threads: dict[int, Block]  # operation index -> what ran on the thread it started
    claim: dict[str, Any]


def label_of(name: str) -> str:
    """The trace's label of a kit object the evidence names without its '#': probe1 -> probe#1."""
    stem = name.rstrip("0123456789")
    return f"{stem}#{name[len(stem):]}"


def why_not(evidence: dict[str, Any] | None) -> str:
    """Why no reproducer can be made of a finding with this evidence ("" when one can)."""
    if not evidence:
        return "the finding carries no evidence (a row of an earlier rstck, or a verdict that is not a fail or warn)"
    if evidence.get("unsupported"):
        return evidence["unsupported"]
    claim = evidence.get("claim") or {}
    if claim.get("by") == "monitor" and claim["rule"] not in MONITORED | _silenced(evidence):
        return f"{claim['rule']} is judged by a monitor the scripts do not have yet"
    if claim.get("by") not in CLAIMS_SEEN_BY_THE_SCRIPT | {"check"}:
        return f"how this check judges {claim.get('rule')} is not one a reproducer can express yet"
    return ""


def _silenced(evidence: dict[str, Any]) -> set[str]:
    return {op["rule"] for op in evidence["ops"] if op["op"] == "silence"}


def scenario_of(evidence: dict[str, Any]) -> Scenario:
    ops = evidence["ops"]
    main = Block("scenario")
    reactions: dict[tuple, Block] = {}
    threads: dict[int, Block] = {}
    for index, op in enumerate(ops):
        if op["op"] in ("another_thread", "second_thread"):
            threads[index] = Block(f"{op['op']}_{index}")
    for op in ops:
        anchor = op.get("inside")
        if anchor is not None:
            key = (anchor["of"], anchor["kind"], anchor["nth"])
            block = reactions.setdefault(key, Block(f"inside_{anchor['of']}_{anchor['kind']}_{anchor['nth']}"))
        elif op.get("thread") is not None and op["thread"] in threads:
            block = threads[op["thread"]]
        else:
            block = main
        block.ops.append(op)
    anchored = [({"of": key[0], "kind": key[1], "nth": key[2]}, block) for key, block in reactions.items()]
    return Scenario(evidence["objects"], main, anchored, threads, evidence["claim"])


class CannotWrite(Exception):
    """The evidence holds something a language cannot write out."""


class Language(Protocol):
    """How one language writes a scenario's parts (python.py, javascript.py)."""

    def declaration(self, name: str, what: dict[str, Any]) -> str | None: ...

    def statement(self, op: dict[str, Any], helper: dict[int, str]) -> str: ...

    def function(self, name: str, lines: list[str]) -> list[str]: ...

    def register(self, anchor: dict[str, Any], function: str) -> str: ...

    def claim(self, claim: dict[str, Any]) -> list[str]: ...

    comment: str


def body(evidence: dict[str, Any], language: Language) -> list[str]:
    """The scenario's lines, in `language`: the kit's objects, what it does inside signals and on threads of its own
    (as functions), and its operations in order, each with the number of the trace row it began at; then the
    check's own judgement."""
    scenario = scenario_of(evidence)
    helper = {id(evidence["ops"][index]): block.name for index, block in scenario.threads.items()}
    lines = [line for name, what in scenario.objects.items() if (line := language.declaration(name, what))]
    for block in [*scenario.threads.values(), *(block for _, block in scenario.reactions)]:
        lines += ["", *language.function(block.name, _statements(block, helper, language))]
    if scenario.reactions:
        lines.append("")
    lines += [language.register(anchor, block.name) for anchor, block in scenario.reactions]
    return [*lines, "", *_statements(scenario.main, helper, language), *language.claim(scenario.claim)]


def _statements(block: Block, helper: dict[int, str], language: Language) -> list[str]:
    lines = []
    for previous, op in zip([None, *block.ops], block.ops):
        if op["op"] == "settle" and "name" not in op and previous is not None and previous["op"] == "settle":
            continue  # settled already: nothing came between (a settle a claim names is kept)
        line = language.statement(op, helper)
        if not line:  # nothing to do in this language (a thread's linger where there are no threads)
            continue
        lines.append(f"{line:<60}  {language.comment} trace #{op['at']}" if "at" in op else line)
    return lines
