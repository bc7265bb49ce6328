"""JUnit XML of a run (`rstck check --junit FILE`), in the shape CI dashboards read.

One testcase per check: classname names the target and the role, name the item and the check;
properties carry rule, spec, level and verdict. A MUST failure is a <failure> with the message and
trace, an error an <error>, n/a, unsupported and untested are <skipped>; a warn or an allowed failure
passes but says so in <system-out> and its properties, so it is seen, not hidden among the skipped.
"""

from __future__ import annotations

import pathlib
import re
import xml.etree.ElementTree as ET
from typing import Any

from rstck.core.signals import escape_controls
from rstck.core.verdict import BadInput
from rstck.reports.html import KEPT_CHARS

_SKIPPED = {"n/a", "unsupported", "untested"}
# Characters XML 1.0 cannot carry even escaped (escape_controls has already made C0 controls visible).
_NOT_XML = re.compile("[\ufffe\uffff\ud800-\udfff]")


def xml_text(value: Any, limit: int = KEPT_CHARS) -> str:
    text = str(value)
    cut = len(text) > limit
    text = _NOT_XML.sub("\ufffd", escape_controls(text[:limit]))
    return text + (f"… ({len(str(value)):,} characters; the rest is in the result rows)" if cut else "")


def classname(row: dict[str, Any]) -> str:
    """The target and the role, as a dashboard groups them: `mypkg.tck:target.publisher`."""
    return xml_text(f"{row['target']}.{row['role'] or 'fuzz'}", 500)


def testcase_name(row: dict[str, Any]) -> str:
    return xml_text(f"{row['rule'] or row['violated'] or 'run'} {row['check']}", 500)


def junit_properties(row: dict[str, Any]) -> list[tuple[str, str]]:
    """What every testcase of `rstck check --junit` carries (under pytest the items carry the same four)."""
    return [("rule", row["rule"]), ("spec", row["spec"]), ("level", row["level"]), ("verdict", row["verdict"])] + (
        [("violated", row["violated"])] if row["violated"] and row["violated"] != row["rule"] else [])


def write_junit(rows: list[dict[str, Any]], path: str | pathlib.Path, *, suite: str) -> pathlib.Path:
    path = pathlib.Path(path)
    cases = [_testcase(row) for row in rows]
    counts = {kind: sum(case.find(kind) is not None for case in cases) for kind in ("failure", "error", "skipped")}
    time = sum(float(row["duration_s"] or 0) for row in rows)
    suites = ET.Element("testsuites")
    element = ET.SubElement(suites, "testsuite", name=xml_text(suite, 500), tests=str(len(cases)),
                            failures=str(counts["failure"]), errors=str(counts["error"]),
                            skipped=str(counts["skipped"]), time=f"{time:.3f}")
    element.extend(cases)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        ET.ElementTree(suites).write(path, encoding="utf-8", xml_declaration=True)
    except OSError as exc:
        raise BadInput(f"{path}: cannot write JUnit XML ({exc.strerror})") from exc
    return path


def _testcase(row: dict[str, Any]) -> ET.Element:
    case = ET.Element("testcase", classname=classname(row), name=testcase_name(row),
                      time=f"{float(row['duration_s'] or 0):.3f}")
    properties = ET.SubElement(case, "properties")
    for name, value in junit_properties(row):
        ET.SubElement(properties, "property", name=name, value=xml_text(value, 500))
    verdict, reason = row["verdict"], xml_text(row["reason"], 1_000)
    if verdict == "fail":
        ET.SubElement(case, "failure", message=reason, type=xml_text(f"rstck.{row['violated'] or row['rule']}", 500)).text = \
            xml_text(row["message"])
    elif verdict == "error":
        ET.SubElement(case, "error", message=reason, type="rstck.error").text = xml_text(row["message"])
    elif verdict in _SKIPPED:
        ET.SubElement(case, "skipped", message=xml_text(f"{verdict}: {reason}", 1_500))
    elif verdict != "pass":  # warn, allowed, or a verdict of a later version: passes, and says so
        said = f"{xml_text(verdict, 500)}: {xml_text(row['message'])}"
        deviation = row.get("deviation")
        if isinstance(deviation, dict):
            said += xml_text(f"\nallowed by {deviation.get('entry')}: {deviation.get('reason')} "
                             f"(until {deviation.get('expires')})")
        ET.SubElement(case, "system-out").text = said
    return case
