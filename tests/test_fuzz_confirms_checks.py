"""A fuzz finding that repeats a check's finding (the same item, the same verdict) is folded into it: `rstck check`
prints it under the check's finding, not as a failure of its own, the fuzz phase's line says it confirmed the
finding, and every face reads the folding from one place (rstck/reports/items.py confirmed_findings).

Observed: `rstck check` on a publisher that ignores request(0) printed its fuzz phase's 3.9 finding as a second
`--- fail: 3.9 fuzz-publisher` block, beside the checks' 3.9 finding."""

from __future__ import annotations

import contextlib
import io
import json
import pathlib
import re
import xml.etree.ElementTree as ET

import pytest

from rstck.cli import main
from rstck.reports.items import confirmed_findings, failed_items, is_fuzz_row, item_verdicts

from .zoo import publishers as p
from .zoo.publisher_mutants import publisher_target

ignores_request_zero = publisher_target("ignores request(0)", subscription=p.IgnoresNonPositiveRequest)


def blocks(out: str) -> dict[str, str]:
    """The evidence blocks `rstck check` printed, by their heading (`fail: 3.9 request_zero_signals_on_error`)."""
    return {block.split("\n", 1)[0]: block for block in out.split("\n--- ")[1:]}


def charged(row: dict) -> set[str]:
    return {row["violated"] or row["rule"]} | {other["rule"] for other in row["also_charged"] or ()}


@pytest.fixture(scope="module")
def checked(tmp_path_factory) -> tuple[int, str, pathlib.Path]:
    """`rstck check` on the publisher, with its fuzz phase: (exit code, what it printed, where it wrote)."""
    written = tmp_path_factory.mktemp("checked")
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        code = main(["check", f"{__name__}:ignores_request_zero", "--results", str(written),
                     "--junit", str(written / "junit.xml"), "--html", str(written / "report.html")])
    return code, printed.getvalue(), written


def rows_of(written: pathlib.Path) -> list[dict]:
    return [json.loads(line) for path in written.glob("*.jsonl") for line in path.open()]


def test_a_fuzz_finding_that_repeats_a_checks_is_folded_into_it_in_every_face(checked):
    code, out, written = checked
    assert code == 1, out
    found = blocks(out)
    assert not [heading for heading in found if "fuzz-" in heading], out
    first = next(heading for heading in found if heading.startswith("fail: 3.9 "))
    assert re.search(r"\n  \(fuzzing the publisher found it too: rstck fuzz \S+ --role publisher .*--replay \d+:",
                     found[first]), found[first]
    assert re.search(r"^fuzz publisher: .*, 1 finding \(it confirmed the checks' finding of 3\.9\)$", out, re.M), out
    assert re.search(r"^rstck: .*: \d+ pass, 1 fail, ", out, re.M), out

    rows = rows_of(written)
    [fuzz] = [row for row in rows if is_fuzz_row(row)]
    assert fuzz["verdict"] == "fail" and fuzz["rule"] == "3.9"
    verdicts = item_verdicts(rows)
    assert failed_items(verdicts) == ["3.9"]
    shown = verdicts["3.9"].rows
    assert not is_fuzz_row(shown[0]) and verdicts["3.9"].reason.startswith(shown[0]["check"])
    [folded] = [row for row in shown if is_fuzz_row(row)]
    confirmed_check = first.split()[2]
    said = f"confirms the finding of {confirmed_check}"
    assert folded["confirms"] == confirmed_check, folded
    assert folded["reason"].startswith(f"{said}: 3.9: ") and folded["message"].startswith(f"{said}\n"), folded

    suite = ET.parse(written / "junit.xml").getroot()
    assert len(suite.findall(".//failure")) == 1
    [case] = [c for c in suite.iter("testcase") if c.get("name", "").startswith("3.9:")]
    assert re.search(rf"^  fail +fuzz-publisher \(publisher[^)]*\): {said}: 3\.9: ", case.find("system-out").text,
                     re.M), case.find("system-out").text
    assert said in (written / "report.html").read_text(encoding="utf-8")


def test_a_fuzz_finding_of_an_item_no_check_found_stays_a_finding_of_its_own(checked):
    rows = rows_of(checked[2])
    without = [row for row in rows if is_fuzz_row(row) or "3.9" not in charged(row)]
    assert not confirmed_findings(without)
    verdicts = item_verdicts(without)
    assert verdicts["3.9"].verdict == "fail" and verdicts["3.9"].reason.startswith("3.9: expected on_error(")
    assert not any(row.get("confirms") for row in verdicts["3.9"].rows)
    other_implementation = [{**row, "implementation": "another"} if is_fuzz_row(row) else row for row in rows]
    assert not confirmed_findings(other_implementation)
