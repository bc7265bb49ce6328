"""JUnit XML of a run (`rstck check --junit FILE`, `rstck report --junit FILE`), in the shape CI dashboards read.

One testcase per catalogue item and implementation, judged as the table of `rstck check` judges it
(rstck/reports/items.py), so that a dashboard counts the failed items the table counts. classname: the
implementation and the item's section; name: the item and its sentence; properties: rule, spec, level, verdict.
The checks behind the item are listed in <system-out>. A failed item is a <failure> with the evidence of its
failing check; an error an <error>; blocked, n/a, unsupported and untested are <skipped> with the reason (a
blocked item's names the finding that stopped it and the factory it was found on). A warn or an allowed failure
passes but says so in <system-out> and the verdict property, so it is seen, not hidden among the skipped; under
`strict` a warn is a <failure>. A row no item owns (an error of the fuzz phase) is a testcase of its own.
"""

from __future__ import annotations

import pathlib
import re
import textwrap
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from typing import Any

from rstck.core.catalog import load_catalog
from rstck.core.signals import escape_controls
from rstck.core.verdict import BadInput, Verdict
from rstck.reports.html import KEPT_CHARS
from rstck.reports.items import ItemVerdict, by_implementation, is_failure, item_verdicts, severity

_SKIPPED = {"blocked", Verdict.NOT_APPLICABLE.value, Verdict.UNSUPPORTED.value, Verdict.UNTESTED.value}
# Characters XML 1.0 cannot carry even escaped (escape_controls has already made C0 controls visible).
_NOT_XML = re.compile("[\ufffe\uffff\ud800-\udfff]")
_NAME_CHARS = 80  # of the item's sentence in a testcase's name
_LISTED_REASON_CHARS = 300  # of each check's reason in the list of checks behind an item


def xml_text(value: Any, limit: int = KEPT_CHARS) -> str:
    text = str(value)
    cut = len(text) > limit
    text = _NOT_XML.sub("\ufffd", escape_controls(text[:limit]))
    return text + (f"… ({len(str(value)):,} characters; the rest is in the result rows)" if cut else "")


def classname(row: dict[str, Any]) -> str:
    """A check's target and role, as pytest's own JUnit XML names an rstck item: `reference range.publisher`."""
    return xml_text(f"{row['target']}.{row['role'] or 'fuzz'}", 500)


def write_junit(rows: list[dict[str, Any]], path: str | pathlib.Path, *, suite: str,
                verdicts: Mapping[str, Mapping[str, ItemVerdict]] | None = None,
                strict: bool = False) -> pathlib.Path:
    """A testsuite per implementation, a testcase per item. `verdicts`: each implementation's item verdicts, when
    the caller has judged these rows already (`rstck check` printed them); judged here otherwise."""
    path = pathlib.Path(path)
    suites = ET.Element("testsuites")
    grouped = by_implementation(rows)
    for name, own in grouped.items() or [("", [])]:
        judged = verdicts.get(name) if verdicts is not None else None
        cases = _testcases(name, own, item_verdicts(own) if judged is None else judged, strict=strict)
        counts = {kind: sum(case.find(kind) is not None for case in cases) for kind in ("failure", "error", "skipped")}
        time = sum(float(row["duration_s"] or 0) for row in own)
        named = suite if len(grouped) < 2 else f"{suite}: {name}"
        element = ET.SubElement(suites, "testsuite", name=xml_text(named, 500), tests=str(len(cases)),
                                failures=str(counts["failure"]), errors=str(counts["error"]),
                                skipped=str(counts["skipped"]), time=f"{time:.3f}")
        if strict:
            ET.SubElement(ET.SubElement(element, "properties"), "property", name="strict", value="true")
        element.extend(cases)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        ET.ElementTree(suites).write(path, encoding="utf-8", xml_declaration=True)
    except OSError as exc:
        raise BadInput(f"{path}: cannot write JUnit XML ({exc.strerror})") from exc
    return path


def _testcases(implementation: str, rows: list[dict[str, Any]], verdicts: Mapping[str, ItemVerdict], *,
               strict: bool) -> list[ET.Element]:
    cases = [_item_case(implementation, item_id, found, rows, strict=strict) for item_id, found in verdicts.items()]
    return cases + [_run_case(implementation, row) for row in rows if not row["rule"]]


def _item_case(implementation: str, item_id: str, found: ItemVerdict, rows: list[dict[str, Any]], *,
               strict: bool) -> ET.Element:
    spec, section, level, text = _describe(item_id, rows)
    own = [row for row in found.rows if (row["violated"] or row["rule"]) == item_id]
    time = sum(float(row["duration_s"] or 0) for row in found.rows if row["rule"] == item_id)
    name = f"{item_id}: {textwrap.shorten(text, _NAME_CHARS, placeholder='…')}" if text else item_id
    case = ET.Element("testcase", classname=xml_text(f"{implementation}.{section or spec or 'items'}", 500),
                      name=xml_text(name, 500), time=f"{time:.3f}")
    properties = ET.SubElement(case, "properties")
    for key, value in (("rule", item_id), ("spec", spec), ("level", level), ("verdict", found.verdict),
                       ("checks", str(len(found.rows)))):
        ET.SubElement(properties, "property", name=key, value=xml_text(value, 500))
    verdict, reason = found.verdict, xml_text(found.reason, 1_000)
    shown = _first_of(own, verdict)
    checks = _checks_behind(item_id, found)
    if is_failure(verdict, strict=strict):
        ET.SubElement(case, "failure", message=reason, type=xml_text(f"rstck.{item_id}", 500)).text = \
            _evidence(shown, own)
    elif verdict == Verdict.ERROR.value:
        ET.SubElement(case, "error", message=reason, type="rstck.error").text = _evidence(shown, own)
    elif verdict in _SKIPPED:
        ET.SubElement(case, "skipped", message=xml_text(f"{verdict}: {found.reason}", 1_500))
    elif verdict != Verdict.PASS.value:  # warn, allowed, a verdict of a later version: passes, and says so
        said = f"{xml_text(verdict, 500)}: {xml_text(shown['message'] if shown else found.reason)}"
        deviation = shown.get("deviation") if shown else None
        if isinstance(deviation, dict):
            said += xml_text(f"\nallowed by {deviation.get('entry')}: {deviation.get('reason')} "
                             f"(until {deviation.get('expires')})")
        checks = f"{said}\n\n{checks}"
    ET.SubElement(case, "system-out").text = checks
    return case


def _describe(item_id: str, rows: list[dict[str, Any]]) -> tuple[str, str, str, str]:
    """spec, section, level and sentence of an item: the catalogue's, or for an item of a profile not installed
    here, what its rows say."""
    catalog = load_catalog()
    if item_id in catalog:
        item = catalog[item_id]
        return item.spec, item.section, item.level, item.text
    row = next((r for r in rows if r["rule"] == item_id), None) or next(
        (r for r in rows if r["violated"] == item_id), {})
    if row.get("rule") == item_id:
        return row["spec"], row["section"], row["level"], row["text"]
    return row.get("spec", ""), row.get("section", ""), "", ""


def _first_of(rows: list[dict[str, Any]], verdict: str) -> dict[str, Any] | None:
    """The row that gave the item its verdict: the first of the most severe."""
    ranked = sorted(rows, key=lambda row: severity(row["verdict"]))
    return next((row for row in ranked if row["verdict"] == verdict), ranked[0] if ranked else None)


def _evidence(shown: dict[str, Any] | None, rows: list[dict[str, Any]]) -> str:
    """The message and trace of the check that decided the item, and which other checks found the same."""
    if shown is None:
        return ""
    others = [row for row in rows if row is not shown and row["verdict"] == shown["verdict"]]
    text = f"{xml_text(shown['check'], 500)}:\n{xml_text(shown['message'])}"
    if others:
        text += f"\n\nfound by {len(others)} more check{'s' * (len(others) != 1)} too: " + ", ".join(
            xml_text(row["check"], 200) for row in others[:10]) + (", …" if len(others) > 10 else "")
    return text


def _checks_behind(item_id: str, found: ItemVerdict) -> str:
    """One line per check behind the item: its verdict, name, role and reason; a check of another item says whose
    it was, a check another item's finding stopped says by what."""
    lines = [f"{len(found.rows)} check{'s' * (len(found.rows) != 1)} behind {item_id} ({found.verdict}):"
             if found.rows else f"no check behind {item_id} ({found.verdict})"]
    for row in found.rows:
        charged = row["violated"] or row["rule"]
        whose = "" if row["rule"] == item_id else f", a check of {row['rule']}"
        verdict = "stopped" if charged != item_id else row["verdict"]
        duration = f", {float(row['duration_s'] or 0):.3f} s" if row["rule"] == item_id else ""
        reason = f"by a {row['violated']} {row['verdict']}: {row['reason']}" if charged != item_id else row["reason"]
        line = f"  {verdict:<11} {row['check']} ({row['role'] or 'fuzz'}{whose}{duration})"
        lines.append(xml_text(line, 500) + (f": {xml_text(reason, _LISTED_REASON_CHARS)}" if reason else ""))
    return "\n".join(lines)


def _run_case(implementation: str, row: dict[str, Any]) -> ET.Element:
    """A row of no item (the fuzz phase could not run): an error of its own, counted as no item's failure."""
    case = ET.Element("testcase", classname=xml_text(f"{implementation}.{row['role'] or 'run'}", 500),
                      name=xml_text(row["check"] or "run", 500), time=f"{float(row['duration_s'] or 0):.3f}")
    properties = ET.SubElement(case, "properties")
    ET.SubElement(properties, "property", name="verdict", value=xml_text(row["verdict"], 500))
    if row["verdict"] == Verdict.ERROR.value:
        ET.SubElement(case, "error", message=xml_text(row["reason"], 1_000), type="rstck.error").text = \
            xml_text(row["message"])
    else:
        ET.SubElement(case, "system-out").text = f"{xml_text(row['verdict'], 500)}: {xml_text(row['message'])}"
    return case
