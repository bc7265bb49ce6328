"""The conformance report: one self-contained HTML page (no network, opens from file://).

A summary line (how many implementations are conformant, the failed items of them all), a headline per
implementation with a picture of its verdicts by section (and, given a history, its pass rate over time:
reports/pictures.py), a matrix of catalogue items x implementations per profile grouped by section, filters, and
per cell the evidence and how to reproduce it. Failures come first in every list; paths under the project are
shown relative to it (reports/project_paths.py). Every string is escaped by the template (Jinja2 autoescape) and
control characters are shown as escapes; a Content-Security-Policy allows only the page's own inline script (by its
hash), so markup that slipped through could still run nothing. Long texts are cut, the rest one click away, up to a
bound per text.
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import os
import pathlib
import re
import shlex
import textwrap
from collections.abc import Callable
from importlib import resources
from typing import Any

from rstck.core.catalog import load_catalog
from rstck.core.plugins import adapter_for, profiles
from rstck.core.signals import escape_controls
from rstck.core.verdict import LEVEL_GROUPS, BadInput
from rstck.execution.rows import is_fuzz_row
from rstck.reports.items import ItemVerdict, by_implementation, failed_items, gate_status, item_verdicts
from rstck.reports.pictures import PATTERNS, Point, RunHistory, points_by_day, section_bars, trend_chart, verdict_bars
from rstck.reports.project_paths import relative_to_project
from rstck.execution.rows import recorded_now

SHOWN_CHARS = 2_000  # of a message or trace, before "show all"
KEPT_CHARS = 100_000  # of a message or trace in the page at all: a report stays bounded whatever a target says
CELL_REASON_CHARS = 160
_HEADLINE_VERDICTS = ["fail", "error", "allowed", "warn"]  # listed in a headline, in this order
# The verdict filter's choices, failures first; a verdict this version does not know comes last.
_FILTER_VERDICTS = [*_HEADLINE_VERDICTS, "blocked", "unsupported", "n/a", "untested", "pass"]
# Implementations not conformant first, then those whose checks could not all run, then the conformant (by the
# gate's exit code: 1, 2, 0).
_GATE_CODE_ORDER = {1: 0, 2: 1, 0: 2}
LABEL_WORD_CHARS = 20  # a longer word of a name is shortened in the matrix's column header (the title has it whole)
_MODULE_ATTR = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$")


@dataclasses.dataclass
class Text:
    """A text from a row as the page shows it: its head, and (when longer) the rest up to KEPT_CHARS."""

    head: str
    full: str  # empty when the head is all of it
    total: int

    @classmethod
    def of(cls, value: Any, shown: int = SHOWN_CHARS) -> "Text":
        text = value if isinstance(value, str) else str(value)
        total = len(text)
        if total <= shown:
            return cls(escape_controls(text), "", total)
        return cls(escape_controls(text[:shown]), escape_controls(text[:KEPT_CHARS]), total)

    @property
    def cut_in_page(self) -> bool:
        return self.total > KEPT_CHARS

    @property
    def kept(self) -> int:
        """How many of the text's characters (as written, before escaping) the page holds."""
        return min(self.total, KEPT_CHARS)


@dataclasses.dataclass
class CheckDetail:
    check: str
    target: Text
    role: str
    verdict: str
    description: Text
    reason: Text
    message: Text
    trace: Text
    duration_s: str
    settled_by: Text
    timed_out: bool
    commands: list[tuple[str, Text]]
    deviation: dict[str, Text] | None
    reproducer: dict[str, Text] | None = None  # the finding's standalone script: its link, or why there is none


@dataclasses.dataclass
class Cell:
    verdict: str  # "" when the implementation has no verdict for the item
    reason: Text
    detail: str  # the id of its detail section


@dataclasses.dataclass
class Detail:
    id: str
    item: str
    level: str
    text: Text
    implementation: Text
    verdict: str
    reason: Text
    checks: list[CheckDetail]
    name: str = ""  # the implementation's whole name: what its headline finds the details by


@dataclasses.dataclass
class ItemRow:
    id: str
    level: str
    level_group: str
    spec: str
    text: Text
    cells: list[Cell]
    search: str  # what the text filter looks in (lower case)
    final_spec: str = ""  # a draft item's fate in the final spec: "became 3.9", "contradicts 1.9", "dropped: ..."


@dataclasses.dataclass
class Section:
    name: Text
    items: list[ItemRow]


@dataclasses.dataclass
class Spec:
    name: str
    title: Text
    sections: list[Section]


@dataclasses.dataclass
class ProfileGroup:
    """The items of one profile and the implementations that have rows of it: a matrix of its own."""

    name: str
    title: Text
    implementations: list[Text]
    specs: list[Spec]
    columns: list[tuple[int, str]]  # (the implementation's place among all, its name)
    labels: list[str] = dataclasses.field(default_factory=list)  # the column headers: column_label of each name


@dataclasses.dataclass
class Finding:
    """An item of a headline that is not a plain pass: what, why, where the evidence is, how to rerun it."""

    item: str
    verdict: str
    reason: Text
    detail: str
    command: Text


@dataclasses.dataclass
class Headline:
    name: Text
    status: str
    status_class: str
    profiles: list[str]
    findings: list[Finding]
    blocked: int  # items a finding of another item kept from a verdict: counted, not listed
    counts: str
    failed: int  # the failed items, as every face counts them (rstck/reports/items.py is_failure)
    failed_said: str  # what makes them up: " (1 fail)", " (1 fail, 2 warn); strict: ..."
    failed_by_verdict: dict[str, int] = dataclasses.field(default_factory=dict)  # {"fail": 1, "warn": 2}
    pictures: list[tuple[str, Any]] = dataclasses.field(default_factory=list)  # (profile title, its bars)
    trend: Any = None  # the pass rate over time, when a history was given


@dataclasses.dataclass
class Summary:
    """The page's first line: how many implementations are conformant, and the failed items of them all."""

    implementations: int
    conformant: int
    not_conformant: int
    incomplete: int
    failed: int  # the sum of the headlines' failed items: the number the gate, the table and JUnit report
    failed_said: str  # " (3 fail, 1 warn)"

    @classmethod
    def of(cls, headlines: list[Headline], strict: bool) -> "Summary":
        made_of: dict[str, int] = {}
        for headline in headlines:
            for verdict, count in headline.failed_by_verdict.items():
                made_of[verdict] = made_of.get(verdict, 0) + count
        said = ", ".join(f"{n} {verdict}" for verdict, n in made_of.items() if n)
        return cls(len(headlines), sum(h.status_class == "ok" for h in headlines),
                   sum(h.status_class == "bad" for h in headlines),
                   sum(h.status_class == "incomplete" for h in headlines), sum(h.failed for h in headlines),
                   (f" ({said})" if said else "") + ("; strict: a SHOULD item not met is one" if strict else ""))


def render(rows: list[dict[str, Any]], *, notes: list[str] = (), sources: list[str] = (), history: Any = None,
           verdicts: dict[str, dict[str, ItemVerdict]] | None = None, strict: bool = False) -> str:
    """The page for these (merged) rows; `history`: pass rates over time, drawn per implementation in its
    headline: the Spark engine's (reports/spark.py PassRates, also shown as a table after the items) or a local
    history of runs (RunHistory). `verdicts`: each implementation's item verdicts, when the caller has judged
    these rows already (`rstck check` prints them too). `strict`: a warn is a failed item, and fails the gate."""
    from jinja2 import Environment, PackageLoader, select_autoescape

    env = Environment(loader=PackageLoader("rstck.reports", "templates"), autoescape=select_autoescape(default=True),
                      trim_blocks=True, lstrip_blocks=True)
    script = resources.files("rstck.reports").joinpath("templates/report.js").read_text(encoding="utf-8")
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")
    relative = relative_to_project()
    model = _model(rows, history, verdicts, strict=strict, relative=relative)
    return env.get_template("report.html.j2").render(
        script=script, script_hash=f"sha256-{digest}", generated=recorded_now(), version=_version(),
        notes=[Text.of(relative(n), 400) for n in notes], sources=[Text.of(relative(s), 400) for s in sources],
        rows=len(rows),
        history=None if isinstance(history, RunHistory) else history, **model)


def _version() -> str:
    from importlib import metadata

    try:
        return metadata.version("rstck")
    except metadata.PackageNotFoundError:
        return "unknown"


def write_report(rows: list[dict[str, Any]], path: str | pathlib.Path, *, notes: list[str] = (),
                 sources: list[str] = (), history: Any = None,
                 verdicts: dict[str, dict[str, ItemVerdict]] | None = None, strict: bool = False) -> pathlib.Path:
    path = pathlib.Path(path)
    _link_reproducers(rows, path.parent)
    page = render(rows, notes=notes, sources=sources, history=history, verdicts=verdicts, strict=strict)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(page, encoding="utf-8")
    except OSError as exc:
        raise BadInput(f"{path}: cannot write the report ({exc.strerror})") from exc
    return path


def _link_reproducers(rows: list[dict[str, Any]], page_directory: pathlib.Path) -> None:
    """Give each row's reproducer (rstck/reports/repro) its link from the page's directory."""
    for row in rows:
        said = row.get("reproducer")
        if isinstance(said, dict) and "path" in said:
            href = os.path.relpath(os.path.abspath(str(said["path"])), os.path.abspath(page_directory))
            row["reproducer"] = {**said, "href": pathlib.PurePath(href).as_posix()}


def _visible(row: dict[str, Any], relative: Callable[[str], str]) -> dict[str, Any]:
    """Every string of a row as the page shows it, before any of it reaches the page: paths under the project
    relative to it (rstck/reports/project_paths.py), control characters as escapes (the message and trace are
    escaped as they are cut: Text.of, which counts their characters as written)."""
    return {key: relative(value) if key in ("message", "trace") and isinstance(value, str)
            else _escaped(value, relative) for key, value in row.items()}


def _escaped(value: Any, relative: Callable[[str], str]) -> Any:
    if isinstance(value, str):
        return escape_controls(relative(value))
    if isinstance(value, dict):
        return {key: _escaped(item, relative) for key, item in value.items()}
    if isinstance(value, list):
        return [_escaped(item, relative) for item in value]
    return value


def _model(rows: list[dict[str, Any]], history: Any = None,
           judged: dict[str, dict[str, ItemVerdict]] | None = None, *, strict: bool = False,
           relative: Callable[[str], str] = str) -> dict[str, Any]:
    rows = [_visible(row, relative) for row in rows]
    rows_of = by_implementation(rows)
    if judged is None:
        verdicts = {name: item_verdicts(rows_of[name]) for name in rows_of}
    else:  # judged on the rows as written: shown as the rows are
        shown = {_escaped(name, relative): found for name, found in judged.items()}
        verdicts = {name: {escape_controls(item_id): ItemVerdict(found.verdict, _escaped(found.reason, relative),
                                                                 [_visible(row, relative) for row in found.rows])
                           for item_id, found in shown[name].items()}
                    for name in rows_of}
    names = sorted(rows_of, key=lambda name: _failures_first(name, rows_of[name], verdicts[name], strict))
    catalog = load_catalog()
    item_info: dict[str, tuple[str, str, str, str]] = {}  # id -> spec, section, level, text
    for item in catalog.items:
        item_info[item.id] = (item.spec, item.section, item.level, item.text)
    for row in rows:  # items of a profile this catalogue does not know: described by their rows
        for item_id in (row["rule"], row["violated"]):
            if item_id and item_id not in item_info:
                item_info[item_id] = (row["spec"] or "unknown", row["section"] or "unknown", row["level"],
                                      row["text"] if item_id == row["rule"] else "")
    shown_ids = [i for i in item_info if any(i in verdicts[n] for n in names)]
    details: list[Detail] = []
    groups: dict[str, ProfileGroup] = {}
    for spec in dict.fromkeys(item_info[i][0] for i in shown_ids):  # a matrix per profile: its implementations
        columns = [(column, name) for column, name in enumerate(names)
                   if any(item_info[i][0] == spec for i in verdicts[name])]
        groups[spec] = ProfileGroup(spec, Text.of(_spec_title(spec)), [Text.of(n, 200) for _, n in columns],
                                    [Spec(spec, Text.of(_spec_title(spec)), [])], columns,
                                    [column_label(n) for _, n in columns])
    for item_id in shown_ids:
        spec, section, level, text = item_info[item_id]
        group = groups[spec]
        cells = []
        for column, name in group.columns:
            found = verdicts[name].get(item_id)
            if found is None:
                cells.append(Cell("", Text.of("not run"), ""))
                continue
            detail_id = f"d-{column}-{len(details)}"
            details.append(_detail(detail_id, item_id, level, text, name, found))
            cells.append(Cell(found.verdict, Text.of(found.reason, CELL_REASON_CHARS), detail_id))
        search = " ".join([item_id, level, text, *(n for _, n in group.columns), *(c.verdict for c in cells),
                           *(c.reason.head for c in cells)]).lower()
        target_spec = group.specs[0]
        if not target_spec.sections or target_spec.sections[-1].name.head != escape_controls(section):
            target_spec.sections.append(Section(Text.of(section), []))
        final_spec = catalog[item_id].final_spec if item_id in catalog else ""
        target_spec.sections[-1].items.append(ItemRow(item_id, level, LEVEL_GROUPS.get(level, level or "?"), spec,
                                                      Text.of(text, 600), cells, search + " " + final_spec.lower(),
                                                      final_spec))
    trends = _trends(history, relative)
    headlines = [_headline(name, rows_of[name], verdicts[name], details, item_info, trends.get(name), strict=strict)
                 for name in names]
    specs = [spec for group in groups.values() for spec in group.specs]
    present = sorted({c.verdict for s in specs for sec in s.sections for r in sec.items for c in r.cells
                      if c.verdict}, key=lambda v: (_FILTER_VERDICTS.index(v) if v in _FILTER_VERDICTS
                                                    else len(_FILTER_VERDICTS), v))
    return {"headlines": headlines, "summary": Summary.of(headlines, strict), "groups": list(groups.values()),
            "details": details, "verdicts": present,
            "levels": [lvl for lvl in ("MUST", "SHOULD", "MAY") if any(
                r.level_group == lvl for s in specs for sec in s.sections for r in sec.items)],
            "profiles": [(s.name, s.title) for s in specs], "patterns": PATTERNS}


def _trends(history: Any, relative: Callable[[str], str] = str) -> dict[str, list[Point]]:
    """Points of the pass rate over time per implementation: per day from the Spark engine's pass rates, per
    run from a local history of runs."""
    if history is None:
        return {}
    points = history.points if isinstance(history, RunHistory) else points_by_day(history.counts)
    return {_escaped(name, relative): [Point(escape_controls(p.label), p.passed, p.decided) for p in line]
            for name, line in points.items()}  # named as the rows are once shown (_visible)


def _failures_first(name: str, rows: list[dict[str, Any]], verdicts: dict[str, ItemVerdict],
                    strict: bool) -> tuple[int, int, str]:
    """Where an implementation stands in every list of the page: not conformant first (the most failed items
    first), then incomplete, then conformant; by name among equals."""
    _, code = gate_status(rows, strict=strict)
    return _GATE_CODE_ORDER[code], -len(failed_items(verdicts, strict=strict)), name


def column_label(name: str) -> str:
    """An implementation's name as its matrix column's header shows it: whole, but for a word longer than
    LABEL_WORD_CHARS (a path, a module), which keeps its scheme (`node:`, `tcp://`) and as many of its last parts
    as fit (`node:…/reactive_streams.js`, `…client_command`). A header then wraps between words only, and stays
    narrow."""
    return " ".join(_short_word(word) for word in name.split())


def _short_word(word: str) -> str:
    scheme = re.match(r"[a-z][a-z0-9+-]*:(?://)?", word)
    head = scheme.group(0) if scheme else ""
    rest = word[len(head):]
    if len(word) <= LABEL_WORD_CHARS or len(rest) <= LABEL_WORD_CHARS:
        return word
    for separator in re.finditer(r"[/.:]", rest):
        end = rest[separator.end():]
        if end and len(end) <= LABEL_WORD_CHARS:
            return f"{head}…{'/' if separator.group(0) == '/' else ''}{end}"
    return f"{head}…{rest[-(LABEL_WORD_CHARS - 1):]}"


def _spec_title(spec: str) -> str:
    """The profile's title; the spec's own name for rows of a profile not installed here."""
    return next((profile.title for profile in profiles() if profile.name == spec), spec)


def _headline(name: str, rows: list[dict[str, Any]], verdicts: dict[str, ItemVerdict], details: list[Detail],
              item_info: dict[str, tuple[str, str, str, str]], trend: list[Point] | None = None, *,
              strict: bool = False) -> Headline:
    status, code = gate_status(rows, strict=strict)
    profiles = []
    for spec in dict.fromkeys(row["spec"] for row in rows if row["spec"]):
        must = [i for i in verdicts if item_info[i][0] == spec and LEVEL_GROUPS.get(item_info[i][2]) == "MUST"]
        passed = sum(verdicts[i].verdict == "pass" for i in must)
        others: dict[str, int] = {}
        for i in must:
            if verdicts[i].verdict != "pass":
                others[verdicts[i].verdict] = others.get(verdicts[i].verdict, 0) + 1
        rest = ", ".join(f"{count} {verdict}" for verdict, count in sorted(others.items()))
        profiles.append(f"{_spec_title(spec)}: {passed} of {len(must)} MUST items passed" + (f" ({rest})" if rest
                                                                                               else ""))
    detail_of = {(d.name, d.item): d.id for d in details}
    findings = sorted(((item_id, v) for item_id, v in verdicts.items() if v.verdict in _HEADLINE_VERDICTS),
                      key=lambda found: _HEADLINE_VERDICTS.index(found[1].verdict))
    listed = [Finding(item_id, v.verdict, Text.of(v.reason, 300), detail_of.get((name, item_id), ""),
                      Text.of(_first_command(v.rows), 300)) for item_id, v in findings]
    blocked = sum(v.verdict == "blocked" for v in verdicts.values())
    counts: dict[str, int] = {}
    for v in verdicts.values():
        counts[v.verdict] = counts.get(v.verdict, 0) + 1
    status_class = {0: "ok", 1: "bad", 2: "incomplete"}[code]
    failed = failed_items(verdicts, strict=strict)
    made_of = {verdict: sum(verdicts[i].verdict == verdict for i in failed) for verdict in ("fail", "warn")}
    failed_said = ", ".join(f"{n} {verdict}" for verdict, n in made_of.items() if n)
    failed_said = f" ({failed_said})" if failed_said else ""
    failed_said += "; strict: a SHOULD item not met is one" if strict else ""
    pictures = []
    for spec in dict.fromkeys(item_info[i][0] for i in verdicts):  # the profiles in catalogue order
        of_spec = {i: v.verdict for i, v in verdicts.items() if item_info[i][0] == spec}
        bars = section_bars(of_spec, {i: item_info[i][1] for i in of_spec})
        pictures.append((_spec_title(spec), verdict_bars(f"{name}, {_spec_title(spec)}", bars)))
    return Headline(Text.of(name, 200), status, status_class, profiles, listed, blocked,
                    ", ".join(f"{n} {v}" for v, n in sorted(counts.items())), len(failed), failed_said, made_of,
                    pictures, trend_chart(name, trend) if trend else None)


def _detail(detail_id: str, item_id: str, level: str, text: str, name: str, found: ItemVerdict) -> Detail:
    checks = [_check_detail(row) for row in found.rows]
    return Detail(detail_id, item_id, level, Text.of(text, 2_000), Text.of(name, 200), found.verdict,
                  Text.of(found.reason, 1_000), checks, name)


def _with_legend(row: dict[str, Any]) -> str:
    """A trace and what its names stand for (a passing check's message holds neither)."""
    legend = row.get("legend") or ""
    return f"{row['trace']}\nwhere:\n{textwrap.indent(legend, '    ')}" if row["trace"] and legend else row["trace"]


def _check_detail(row: dict[str, Any]) -> CheckDetail:
    deviation = row.get("deviation")
    return CheckDetail(
        check=str(row["check"]), target=Text.of(row["target"], 300), role=str(row["role"]),
        verdict=str(row["verdict"]), description=Text.of(row["description"], 1_000), reason=Text.of(row["reason"]),
        message=Text.of(row["message"]), trace=Text.of(_with_legend(row)),
        duration_s=f"{row['duration_s']:.3f} s" if isinstance(row["duration_s"], (int, float)) else "?",
        settled_by=Text.of(row["settled_by"], 300), timed_out=bool(row["timed_out"]),
        commands=[(label, Text.of(command, 1_000)) for label, command in _commands(row)],
        deviation={k: Text.of(v, 1_000) for k, v in deviation.items()} if isinstance(deviation, dict) else None,
        reproducer=_reproducer(row.get("reproducer")))


def _reproducer(said: Any) -> dict[str, Text] | None:
    """The link to a finding's reproducer (rstck/reports/repro), relative to the page when written with it."""
    if not isinstance(said, dict):
        return None
    if "path" in said:
        path = str(said["path"])
        return {"href": Text.of(str(said.get("href", path)), 1_000), "name": Text.of(pathlib.PurePath(path).name, 300),
                "unconfirmed": Text.of(str(said.get("unconfirmed", "")), 1_000)}
    return {"none": Text.of(str(said.get("none", "")), 1_000)}


def _first_command(rows: list[dict[str, Any]]) -> str:
    """How to rerun the first check behind a verdict, for its headline."""
    commands = _commands(rows[0]) if rows else []
    return commands[0][1] if commands else ""


def _commands(row: dict[str, Any]) -> list[tuple[str, str]]:
    """How to run this check again: the CLI, the pytest node, the fuzz replay."""
    commands = []
    target = _target_argument(row.get("loaded_as") or "")
    if not is_fuzz_row(row):
        opt_in = f" --profile {row['spec']}" if row["spec"] in load_catalog().opt_in else ""
        commands.append(("rstck", f"rstck check {target}{opt_in} --rules {shlex.quote(str(row['rule']))}"))
    if row["node_id"]:
        commands.append(("pytest", f"pytest {shlex.quote(str(row['node_id']))}"))
    if row["replay"]:
        commands.append(("replay", str(row["replay"])))
    reproducer = row.get("reproducer") or {}
    if "command" in reproducer:
        commands.append(("reproducer", str(reproducer["command"])))
    return commands


def _target_argument(loaded_as: str) -> str:
    """The target as `rstck check` takes it: the string the user typed, as its adapter says it is named again
    (MODULE:ATTR, tcp://HOST:PORT, node:PATH, --client CMD, ...); the placeholder only for a row that names no
    target the kit could load again (an older row, a name given in code)."""
    adapter = adapter_for(loaded_as)
    if adapter is not None and loaded_as.partition(":")[2]:
        return " ".join(shlex.quote(argument) for argument in adapter.command_arguments(loaded_as))
    if _MODULE_ATTR.match(loaded_as):
        return loaded_as
    return "MODULE:ATTR"
