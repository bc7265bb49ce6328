"""The `rstck` command: exit codes, the table and summary, results rows, bad input."""

from __future__ import annotations

import json
import pathlib
import re
import subprocess
import sys

import pytest

import rstck.reference.targets
from rstck.cli import main
from rstck.execution.plan import plan
from rstck.core.checks import UNTESTED, all_checks
from rstck.core.catalog import load_catalog
from rstck.core.target import Target, load_target

from .zoo import cli_targets

REPO = pathlib.Path(__file__).resolve().parent.parent
REFERENCE_TARGETS = sorted(name for name, value in vars(rstck.reference.targets).items()
                           if isinstance(value, Target))
RESULT_FIELDS = {"target", "spec", "rule", "level", "check", "verdict", "duration_s", "message", "trace"}


def run(capsys, *argv: str) -> tuple[int, list[str], list[str]]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out.splitlines(), err.splitlines()


# One reference per role in the suite, every one in the soak (and in `make check`).
ONE_PER_ROLE = {"asyncio_publisher", "buffered_subscriber", "map_processor"}


@pytest.mark.parametrize("name", [name if name in ONE_PER_ROLE else pytest.param(name, marks=pytest.mark.soak)
                                  for name in REFERENCE_TARGETS])
def test_a_reference_target_is_conformant(capsys, name):
    code, out, _ = run(capsys, "check", f"rstck.reference.targets:{name}")
    assert code == 0, "\n".join(out)
    assert out[-1].endswith("— conformant")


def test_make_check_runs_every_reference_target():
    listed = set(re.findall(r"rstck\.reference\.targets:(\w+)", (REPO / "Makefile").read_text()))
    assert listed == set(REFERENCE_TARGETS)


def test_a_table_row_per_item_then_the_summary_last(capsys):
    code, out, _ = run(capsys, "check", "rstck.reference.targets:sync_publisher")
    assert code == 0
    assert out[0].split() == ["rule", "level", "verdict", "reason"]
    rows = {line.split()[0]: line.split()[1:3] for line in out[1:] if line and line[0].isdigit()}
    checked = {p.check.rule for p in plan(load_target("rstck.reference.targets:sync_publisher"))}
    assert checked <= set(rows)
    assert rows["3.9"] == ["MUST", "pass"]
    assert re.fullmatch(r"rstck: \d+ checks, \d+ items: .* — conformant", out[-1])


def test_a_mutant_fails_its_rule_and_exits_1(capsys):
    code, out, _ = run(capsys, "check", "tests.zoo.cli_targets:excess_on_next")
    text = "\n".join(out)
    assert code == 1
    assert re.search(r"^1\.1 +MUST +fail ", text, re.M)
    assert load_catalog()["1.1"].text in text  # the failure quotes the rule
    assert "observed (trace)" in text or "trace:" in text
    assert out[-1].endswith("NOT CONFORMANT (a MUST item failed)")


@pytest.mark.parametrize("name, rule", [("subscribe_raises", "1.9"), ("no_on_subscribe", "1.9"),
                                        ("pumps_cancelled_subscribers", "1.8")])
def test_a_misbehaving_publisher_gets_verdicts_not_a_crash(capsys, name, rule):
    code, out, _ = run(capsys, "check", f"tests.zoo.cli_targets:{name}")
    text = "\n".join(out)
    assert code == 1
    assert re.search(rf"^{re.escape(rule)} +MUST +fail ", text, re.M)
    assert " error" not in out[-1]  # the summary counts no error rows


def test_a_should_item_not_met_warns_and_stays_conformant(capsys):
    code, out, _ = run(capsys, "check", "tests.zoo.cli_targets:unhelpful_request_error")
    assert code == 0
    assert re.search(r"^3\.9\.message +SHOULD +warn ", "\n".join(out), re.M)


def test_a_factory_that_raises_gives_error_rows_and_exits_2(capsys):
    code, out, _ = run(capsys, "check", "tests.zoo.cli_targets:factory_raises")
    assert code == 2
    assert re.search(r"^1\.1 +MUST +error +.*create_publisher\(\d+\) raised RuntimeError", "\n".join(out), re.M)
    assert out[-1].endswith("INCOMPLETE (checks could not run)")


def test_rules_select_by_id_glob(capsys):
    code, out, _ = run(capsys, "check", "rstck.reference.targets:sync_publisher", "--rules", "1.*,3.9", "--list")
    assert code == 0
    rules = {line.split()[0] for line in out[:-1]}
    assert rules == {p.check.rule for p in plan(load_target("rstck.reference.targets:sync_publisher"),
                                                 rules="1.*,3.9")}
    assert "3.9" in rules and "3.9.message" not in rules and "1.10" in rules


def test_list_shows_what_would_run_and_runs_nothing(capsys):
    cli_targets.publishers_made.clear()
    code, out, _ = run(capsys, "check", "tests.zoo.cli_targets:counting", "--list")
    assert code == 0
    assert out[-1] == f"{len(plan(cli_targets.counting))} checks would run against counting"
    assert cli_targets.publishers_made == []


def test_results_dir_gets_one_row_per_check(capsys, tmp_path):
    code, _, _ = run(capsys, "check", "rstck.reference.targets:sync_publisher", "--rules", "1.*",
                     "--results", str(tmp_path / "results"))
    assert code == 0
    (path,) = (tmp_path / "results").glob("*.jsonl")
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    planned = plan(load_target("rstck.reference.targets:sync_publisher"), rules="1.*")
    assert [(r["rule"], r["check"]) for r in rows] == [(p.check.rule, p.check.name) for p in planned]
    for row in rows:
        assert RESULT_FIELDS <= set(row)
        assert row["spec"] == "reactive-streams"
        assert row["verdict"] in ("pass", "unsupported")
        assert row["duration_s"] >= 0


def test_rules_lists_the_catalogue_with_coverage(capsys):
    code, out, _ = run(capsys, "rules")
    assert code == 0
    blocks: dict[str, str] = {}
    for line in out:
        if line and not line.startswith(" "):
            current = line.split()[0]
            blocks[current] = line
        else:
            blocks[current] += " " + line.strip()
    assert list(blocks) == [item.id for item in load_catalog().items]
    assert list(blocks)[:2] == ["1.1", "1.2"] and "4.2" in blocks
    checks = all_checks()
    for rule_id, block in blocks.items():
        item = load_catalog()[rule_id]
        assert item.level in block.split("[")[0] and item.text[:40] in block
        covering = [c.name for c in checks if c.rule == rule_id]
        if covering:
            assert f"covered by: {', '.join(covering)}" in block
        else:
            assert f"untested: {UNTESTED.get(rule_id, 'no check yet')[:30]}" in block


BAD_INPUT = {
    "no colon": (["check", "rstck.reference.targets"], "MODULE:ATTRIBUTE"),
    "module does not import": (["check", "no_such_module_here:target"], "cannot import 'no_such_module_here'"),
    "missing attribute": (["check", "rstck.reference.targets:no_such_target"], "has no attribute 'no_such_target'"),
    "not a target": (["check", "tests.zoo.cli_targets:not_a_target"], "not a target"),
    "unknown rule id": (["check", "rstck.reference.targets:sync_publisher", "--rules", "9.99"], "'9.99'"),
    "empty selection": (["check", "rstck.reference.targets:sync_publisher", "--rules", "4.*"], "no check to run"),
    "negative timeout": (["check", "rstck.reference.targets:sync_publisher", "--timeout", "-1"],
                         "--timeout must be a number of seconds above 0"),
    "not a number": (["check", "rstck.reference.targets:sync_publisher", "--timeout", "nan"], "--timeout must be"),
    "infinite timeout": (["check", "rstck.reference.targets:sync_publisher", "--timeout", "inf"], "--timeout must be"),
    "huge timeout": (["check", "rstck.reference.targets:sync_publisher", "--timeout", "1e308"], "--timeout must be"),
    "negative stream length": (["check", "rstck.reference.targets:sync_publisher", "--stream-length", "-5"],
                               "--stream-length must be"),
}


@pytest.mark.parametrize("argv, says", BAD_INPUT.values(), ids=BAD_INPUT.keys())
def test_bad_input_exits_2_with_one_line_that_says_what_to_fix(capsys, argv, says):
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert out == []
    assert len(err) == 1 and err[0].startswith("rstck: ") and says in err[0], err


def test_a_module_that_raises_on_import_is_bad_input(capsys, tmp_path, monkeypatch):
    (tmp_path / "broken_tck.py").write_text("raise RuntimeError('half-written module')\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    code, _, err = run(capsys, "check", "broken_tck:target")
    assert code == 2
    assert len(err) == 1 and "importing 'broken_tck' raised RuntimeError: half-written module" in err[0]


def test_the_installed_command_exits_with_the_verdict():
    done = subprocess.run([sys.executable, "-m", "rstck.cli", "check", "tests.zoo.cli_targets:excess_on_next",
                           "--rules", "1.1"], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1, done.stderr
    assert done.stdout.splitlines()[-1].endswith("NOT CONFORMANT (a MUST item failed)")


@pytest.mark.parametrize("where", [["--in-process"], []], ids=["in-process", "supervised"])
def test_a_check_run_imports_no_hypothesis_no_fuzzer_and_no_multiprocessing(where):
    # Start-up: `rstck check --no-fuzz` needs none of them; Hypothesis alone costs about 0.2 s to import, and
    # multiprocessing a quarter of a one-check run's own time (a forked worker does without it). In-process,
    # what the worker loads is seen here too.
    script = ("import sys; from rstck.cli import main; "
              f"main(['check', 'rstck.reference.targets:sync_publisher', '--no-fuzz', *{where!r}]); "
              "print(sorted(m for m in sys.modules if m.split('.')[0] in ('hypothesis', 'multiprocessing')"
              " or m.startswith('rstck.fuzz.') and m != 'rstck.fuzz.budgets'))")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.splitlines()[-1] == "[]"
