"""`rstck report --engine spark`: a history of runs (JSON Lines and Parquet) merged with Spark SQL as the
local reader merges it, plus the pass rate over time per item and implementation."""

from __future__ import annotations

import csv
import json
from xml.etree import ElementTree

import pytest

from rstck.execution.rows import read_rows
from rstck.execution.spark_rows import write_parquet

pytestmark = [pytest.mark.spark, pytest.mark.xdist_group("spark")]

DAYS = ["2026-03-01", "2026-03-02", "2026-03-03"]


def row(implementation: str, rule: str, verdict: str, day: str, check: str = "") -> dict:
    return {"schema": 1, "target": implementation, "implementation": implementation, "spec": "reactive-streams",
            "rule": rule, "level": "MUST", "check": check or f"check_{rule}", "role": "publisher",
            "verdict": verdict, "violated": rule if verdict == "fail" else "", "reason": f"{verdict} on {day}",
            "recorded_at": f"{day}T03:00:00.000+00:00"}


def nightly_history() -> list[list[dict]]:
    """Three nightly runs of two implementations: `steady` passes 1.1 and 3.9 every night; `flaky` fails
    3.9 on the second night only."""
    runs = []
    for day in DAYS:
        runs.append([row("steady", "1.1", "pass", day), row("steady", "3.9", "pass", day),
                     row("flaky", "1.1", "pass", day), row("flaky", "3.9", "fail" if day == DAYS[1] else "pass", day)])
    return runs


def test_a_history_of_runs_aggregates_on_spark_as_it_merges_locally(spark, tmp_path, capsys):
    from rstck.cli import main

    history = tmp_path / "history"
    history.mkdir()
    runs = nightly_history()
    for day, rows in zip(DAYS[:2], runs[:2]):
        (history / f"check-{day}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    write_parquet(spark, runs[2], str(history / f"check-{DAYS[2]}.parquet"))
    (history / "check-broken.jsonl").write_text('{"not": "a row"}\nnot json\n', encoding="utf-8")

    output = tmp_path / "report" / "index.html"
    junit = tmp_path / "report" / "junit.xml"
    assert main(["report", "--engine", "spark", str(history), "-o", str(output), "--junit", str(junit)]) == 0
    captured = capsys.readouterr()
    assert "2 lines of the JSON Lines files left out: not result rows" in captured.err
    assert "8 rows of older runs superseded" in captured.err
    assert "(4 rows, 2 implementations)" in captured.out
    assert "Pass rate over time" in output.read_text(encoding="utf-8")

    with (output.parent / "pass-rate.csv").open(encoding="utf-8") as table:
        rates = {(r["implementation"], r["item"], r["day"]): r["pass_rate"] for r in csv.DictReader(table)}
    assert rates[("flaky", "3.9", DAYS[1])] == "0.0000" and rates[("flaky", "3.9", DAYS[2])] == "1.0000"
    assert rates[("steady", "3.9", DAYS[1])] == "1.0000" and len(rates) == 12

    # The rows the report shows are the local merge's: the last night's, so flaky's 3.9 passes again.
    everything = tmp_path / "all.jsonl"
    everything.write_text("".join(json.dumps(r) + "\n" for rows in runs for r in rows), encoding="utf-8")
    newest = {(r["implementation"], r["rule"]): r["reason"] for r in read_rows([everything]).rows}
    assert newest == {key: f"pass on {DAYS[2]}" for key in newest} and len(newest) == 4
    cases = ElementTree.parse(junit).getroot().iter("testcase")
    shown = {case.get("classname").split(".")[0] + " " + case.get("name") for case in cases}
    assert len(shown) == 4 and not any(ElementTree.parse(junit).getroot().iter("failure"))
