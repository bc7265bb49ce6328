"""Under pytest each broken sentence is counted once (issue: a publisher with 3.3 and 3.9 broken failed five
items: the blocked 3.9.message item failed with the 3.9 finding again, and the fuzz item repeated it), and the
allowlist of `rstck check --allow` applies as `pytest --rstck-allow`, so that both gates agree."""

from __future__ import annotations

import datetime
import pathlib
import subprocess
import sys

import pytest

from .zoo import cli_targets  # noqa: F401  (imported once, so inner runs reuse it)

TWO_RULES = "tests.zoo.cli_targets:breaks_3_3_and_3_9"
REPO = pathlib.Path(__file__).resolve().parent.parent


def outcomes(reprec: pytest.HookRecorder) -> dict[str, str]:
    """Each item's outcome, by the part of its node id after '::'."""
    found = {}
    for report in reprec.getreports("pytest_runtest_logreport"):
        name = report.nodeid.split("::", 1)[1]
        if report.when == "call" or (report.when == "setup" and not report.passed):
            found[name] = "xfailed" if hasattr(report, "wasxfail") else report.outcome
    return found


def test_each_broken_sentence_fails_one_item_and_the_blocked_one_is_skipped_naming_the_finding(pytester):
    reprec = pytester.inline_run("--rstck-target", TWO_RULES, "-p", "no:randomly")
    found = outcomes(reprec)
    failed = sorted(name for name, outcome in found.items() if outcome == "failed")
    assert [name.split("-")[0] for name in failed] == ["3.3", "3.9"], failed
    same = [r for r in reprec.getreports("pytest_runtest_logreport") if "::3.9-" in r.nodeid and r.skipped]
    assert same and all("the same finding: 3.9 failed already in " in r.longrepr[2] for r in same)
    blocked = [r for r in reprec.getreports("pytest_runtest_logreport") if "3.9.message-" in r.nodeid and r.skipped]
    assert len(blocked) == 1
    assert "blocked: non_positive_request_error_explains_itself was stopped by another item's finding, reported " \
           "by rstck[tests.zoo.cli_targets:breaks_3_3_and_3_9]::3.9-" in blocked[0].longrepr[2]
    assert found["fuzz-publisher"] == "passed"  # what it found, the checks reported


def test_strict_fails_a_should_item_not_met_too_and_still_counts_each_failed_item_once(pytester):
    """--rstck-strict means what `rstck check --strict` means: the RECOMMENDED 3.3.depth-one item not met is a
    failed item beside 3.3 and 3.9, and each fails one item; the blocked 3.9.message item stays a skip naming the
    finding, and the fuzz item passes for what the checks reported."""
    reprec = pytester.inline_run("--rstck-target", TWO_RULES, "-p", "no:randomly", "--rstck-strict")
    found = outcomes(reprec)
    failed = [r for r in reprec.getreports("pytest_runtest_logreport") if r.failed]
    assert sorted(dict(r.user_properties)["rule"] for r in failed) == ["3.3", "3.3.depth-one", "3.9"], failed
    assert all(r.when == "call" for r in failed)
    same = [r for r in reprec.getreports("pytest_runtest_logreport") if "::3.9-" in r.nodeid and r.skipped]
    assert same and all("the same finding: 3.9 failed already in " in r.longrepr[2] for r in same)
    blocked = [r for r in reprec.getreports("pytest_runtest_logreport") if "3.9.message-" in r.nodeid and r.skipped]
    assert len(blocked) == 1 and [outcome for name, outcome in found.items() if name.startswith("3.9.message-")] \
        == ["skipped"]
    assert "blocked: non_positive_request_error_explains_itself was stopped by another item's finding, reported " \
           "by rstck[tests.zoo.cli_targets:breaks_3_3_and_3_9]::3.9-" in blocked[0].longrepr[2]
    assert found["fuzz-publisher"] == "passed"
    assert reprec.ret == 1
    cli = subprocess.run([sys.executable, "-m", "rstck", "check", TWO_RULES, "--strict"],
                         capture_output=True, text=True, timeout=300, cwd=REPO)
    assert cli.returncode == 1 and f"({len(failed)} failed under --strict)" in cli.stdout, cli.stdout[-2000:]


def test_a_finding_no_check_item_reported_still_fails_the_item_that_saw_it(pytester):
    """3.9's own items deselected: the blocked 3.9.message item is then the only one to report the 3.9 finding."""
    reprec = pytester.inline_run("--rstck-target", TWO_RULES, "-p", "no:randomly", "--rstck-rules", "3.9.message")
    assert list(outcomes(reprec).values()) == ["failed"]


def test_a_fuzz_finding_no_check_saw_fails_the_fuzz_item(pytester):
    reprec = pytester.inline_run("--rstck-target", "tests.zoo.cli_targets:clamps_demand_asked_in_on_subscribe",
                                 "-p", "no:randomly", "-m", "fuzz")
    assert outcomes(reprec) == {"fuzz-publisher": "failed"}


def allowlist(tmp_path, rule: str, expires: datetime.date) -> str:
    path = tmp_path / "deviations.toml"
    path.write_text(f'[[deviation]]\nrule = "{rule}"\ntarget = "{TWO_RULES}"\nreason = "tracked as issue 7"\n'
                    f"expires = {expires.isoformat()}\n")
    return str(path)


def test_the_allowlist_makes_an_allowed_failure_expected_and_pytest_agrees_with_rstck_check(pytester, tmp_path):
    deviations = allowlist(tmp_path, "3.*", datetime.date.today() + datetime.timedelta(days=30))
    reprec = pytester.inline_run("--rstck-target", TWO_RULES, "-p", "no:randomly", "--rstck-allow", deviations)
    found = outcomes(reprec)
    assert not [name for name, outcome in found.items() if outcome == "failed"], found
    assert {name.split("-")[0] for name, outcome in found.items() if outcome == "xfailed"} >= {"3.3", "3.9"}
    assert reprec.ret == 0
    cli = subprocess.run([sys.executable, "-m", "rstck", "check", TWO_RULES, "--allow", deviations],
                         capture_output=True, text=True, timeout=300, cwd=REPO)
    assert cli.returncode == 0, cli.stdout + cli.stderr


def test_an_expired_entry_fails_the_run_by_itself_and_a_stale_one_is_said(pytester, tmp_path):
    expired = allowlist(tmp_path, "3.3", datetime.date.today() - datetime.timedelta(days=1))
    result = pytester.runpytest("--rstck-target", TWO_RULES, "-p", "no:randomly", "--rstck-allow", expired,
                                "--rstck-rules", "3.3")
    assert result.ret == 1
    result.stdout.fnmatch_lines(["*deviations.toml:1 (3.3 for *) expired on *"])
    stale = allowlist(tmp_path, "1.1", datetime.date.today() + datetime.timedelta(days=30))
    result = pytester.runpytest("--rstck-target", TWO_RULES, "-p", "no:randomly", "--rstck-allow", stale,
                                "--rstck-rules", "1.1")
    assert result.ret == 0
    result.stdout.fnmatch_lines(["*deviations.toml:1 (1.1 for *) is stale: nothing it allows failed*"])


def test_a_malformed_allowlist_is_a_usage_error(pytester, tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text("[[deviation]]\nrule = \"3.9\"\n")
    result = pytester.runpytest("--rstck-target", TWO_RULES, "--rstck-allow", str(bad))
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*bad.toml:1: the deviation has no 'target'*"])


def test_under_xdist_loadgroup_each_broken_sentence_still_fails_one_item(pytester, monkeypatch):
    """A target's items carry its xdist group, so that `--dist loadgroup` runs them in one worker, where the
    counting knows every item before."""
    monkeypatch.setenv("PYTHONPATH", str(REPO))  # the workers import the zoo's target as the user's package
    result = pytester.runpytest_subprocess("--rstck-target", TWO_RULES, "-p", "no:randomly", "-n", "2",
                                           "--dist", "loadgroup", "-rf", timeout=300)
    failed = sorted(line.split("::", 1)[1].split("-")[0] for line in result.outlines if line.startswith("FAILED"))
    assert failed == ["3.3", "3.9"], result.outlines[-30:]
