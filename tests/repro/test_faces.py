"""Reproducers where a user meets them: `rstck check --repro`, `pytest --rstck-repro`, the HTML report's link, the
result rows (schema 2, older rows still read)."""

from __future__ import annotations

import json
import pathlib
import re

import pytest

from rstck.cli import main
from rstck.core.target import load_target
from rstck.execution.rows import SCHEMA_VERSION, upgrade
from rstck.reports.html import render
from rstck.reports.repro import Reproducer, reason_against, summary, write_reproducers

from ..zoo import cli_targets  # noqa: F401  (imported once, so inner pytest runs reuse it)
from .helpers import confirmed_in_warm_interpreter  # noqa: F401  (the fixture below)
from .helpers import ROOT, assert_confirmed_reproduces, rows_of, run_script_file

# The kit's confirming runs of the scripts it writes are made in children of a warm interpreter (helpers.py).
pytestmark = pytest.mark.usefixtures("confirmed_in_warm_interpreter")

MUTANT = "tests.zoo.cli_targets:excess_on_next"
FIXED = "tests.repro.zoo_targets:baseline"


def test_check_writes_a_script_per_finding_that_fails_the_mutant_and_passes_the_fixed_version(capsys, tmp_path):
    repro, results, html = tmp_path / "repro", tmp_path / "results", tmp_path / "report" / "index.html"
    code = main(["check", MUTANT, "--rules", "1.1", "--repro", str(repro), "--results", str(results),
                 "--html", str(html)])
    out = capsys.readouterr().out
    assert code == 1
    (script,) = repro.glob("*.py")
    assert f"reproducers: 1 of 1 finding written to {repro}" in out
    assert f"1.1 (on_next_count_never_exceeds_requested): python {script}" in out
    assert not re.search(r"^\s*(import|from) rstck", script.read_text(), re.M), "a script imports nothing of rstck"
    broken = run_script_file(script)
    assert broken.returncode == 1 and "BROKEN 1.1: expected at most" in broken.stdout, broken.stdout
    assert run_script_file(script, FIXED).returncode == 0
    (rows_file,) = results.glob("*.jsonl")
    rows = [json.loads(line) for line in rows_file.read_text().splitlines()]
    failing = [row for row in rows if row["verdict"] == "fail"]
    assert failing and all(row["reproducer"]["path"] == str(script.resolve()) for row in failing)
    assert all(row["schema"] == SCHEMA_VERSION and row["evidence"]["ops"] for row in failing)
    assert f'href="../repro/{script.name}"' in html.read_text()


def test_a_finding_a_script_cannot_reproduce_says_why(capsys, tmp_path):
    code = main(["check", "tests.zoo.cli_targets:fast_path_for_the_kits_probes", "--rules", "1.1", "--no-fuzz",
                 "--repro", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 1
    assert re.search(r"reproducers: 0 of [1-9]\d* findings? written", out), out
    assert "none, its replay did not show the finding (it depends on a schedule or state the replay does not " \
           "recreate)" in out
    assert not list(tmp_path.glob("*.py"))


def test_the_pytest_failure_names_the_reproducer(pytester, tmp_path):
    result = pytester.runpytest("--rstck-target", MUTANT, "--rstck-rules", "1.1", "--rstck-repro", str(tmp_path),
                                "-p", "no:randomly")
    assert result.ret == 1
    scripts = sorted(tmp_path.glob("*.py"))
    assert scripts
    result.stdout.fnmatch_lines([f"*reproducer: python {tmp_path}/repro-1.1-*.py*"])
    assert run_script_file(scripts[0], FIXED).returncode == 0


def test_rows_of_an_earlier_schema_have_no_evidence_and_say_so():
    older = upgrade({"schema": 1, "target": "t", "spec": "reactive-streams", "rule": "1.1", "verdict": "fail",
                     "loaded_as": "m:t"})
    assert older["evidence"] is None and older["reproducer"] is None
    assert "carries no evidence" in reason_against(older)


def test_a_target_that_no_script_loads_again_says_so():
    assert "not loaded by a name" in reason_against(upgrade({"target": "t", "rule": "1.1", "verdict": "fail"}))
    assert "echo: targets" in reason_against(upgrade({"target": "t", "rule": "1.1", "verdict": "fail",
                                                       "loaded_as": "echo:echo_kit.services:shouting"}))


def test_the_documented_reproducer_is_the_one_the_kit_writes(capsys, tmp_path):
    """docs/reproducers.md shows the script for docs/examples/lenient_range.py as `rstck check --repro` writes it; run
    as it is, it imports the factory by its own name, and it passes against the fixed publisher."""
    main(["check", "docs.examples.lenient_range:target", "--rules", "3.9", "--repro", str(tmp_path)])
    capsys.readouterr()
    script = tmp_path / "repro-3.9-request_zero_signals_on_error-lenient_range.py"
    written = script.read_text()
    documented = (pathlib.Path(ROOT) / "docs" / "reproducers.md").read_text()
    shown = documented.split("```python\n", 1)[1].split("\n...\n", 1)[0]
    assert written.startswith(shown)
    broken = run_script_file(script)
    assert broken.returncode == 1
    assert "reproducing 3.9 against docs.examples.lenient_range:LenientRange" in broken.stdout
    assert run_script_file(script, "docs.examples.lenient_range:fixed").returncode == 0


def test_a_fuzz_finding_gets_a_reproducer_of_its_shrunk_example(tmp_path):
    """The fuzz phase's finding carries its shrunk example's operations: its script fails the publisher that ignores
    request(0) and passes the fixed one."""
    from rstck.core.target import load_target
    from rstck.fuzz.phase import run_phase

    spec = "docs.examples.lenient_range:target"
    rows, _ = run_phase(load_target(spec), spec, examples=100, timeout_s=5.0)
    found = [row.row() for row in rows if row.violated == "3.9"]
    assert found, [row.reason for row in rows]
    (made,) = write_reproducers(found, tmp_path)
    assert_confirmed_reproduces(made, "docs.examples.lenient_range:fixed")


def test_a_script_kept_unconfirmed_says_so_in_the_summary_and_the_report(tmp_path):
    # A network server that the check left down keeps its script unconfirmed (tests/repro/test_network.py runs
    # such scripts); wherever the script is named, the user is told to restart the server first.
    row = next(row for row in rows_of(load_target(MUTANT), 2.0, "1.1") if row["verdict"] == "fail")
    why = "the server stopped serving after this check, so no replay could confirm the script; restart it"
    script = tmp_path / "repro.py"
    found = Reproducer([row], path=script, command=f"python {script}", unconfirmed=why)
    assert summary([found], tmp_path)[1].endswith(f"python {script} (not confirmed: {why})")
    row["reproducer"] = {"path": str(script), "command": f"python {script}", "unconfirmed": why}
    assert f"not confirmed: {why}" in render([row])
