"""Fuzz items under pytest: one per role of each configured target, marked `fuzz`."""

from __future__ import annotations

import json
import re

import pytest

from rstck.plugin.fuzz_items import REPLAY_ENV

from .zoo import cli_targets  # noqa: F401  (imported once, so inner runs reuse it)

MUTANT = "tests.zoo.cli_targets:excess_on_next"

VERIFICATIONS = """
import rstck
from rstck.reference.targets import map_processor, sync_publisher


class TestSyncPublisher(rstck.PublisherVerification):
    target = sync_publisher


class TestOnlyRule39(rstck.PublisherVerification):
    target = sync_publisher
    rules = "3.9"


class TestMapProcessor(rstck.ProcessorVerification):
    target = map_processor
"""


@pytest.fixture(autouse=True)
def _ci_budget(monkeypatch):
    monkeypatch.delenv("RSTCK_FUZZ_PROFILE", raising=False)
    monkeypatch.delenv(REPLAY_ENV, raising=False)


def collected(pytester: pytest.Pytester, *args: str) -> list[str]:
    reprec = pytester.inline_run("--collect-only", *args)
    return [item.nodeid for item in reprec.getcall("pytest_collection_finish").session.items]


def test_each_configured_target_gets_a_fuzz_item_per_role_and_markers_split_the_run(pytester):
    pytester.makepyfile(test_mine=VERIFICATIONS)
    everything = collected(pytester, "--strict-markers")
    fuzz = collected(pytester, "-m", "fuzz", "--strict-markers")
    assert fuzz == ["test_mine.py::TestSyncPublisher::fuzz-publisher",
                    "test_mine.py::TestMapProcessor::fuzz-processor"]  # a rule selection adds none
    checks = collected(pytester, "-m", "not fuzz")
    assert sorted(checks + fuzz) == sorted(everything) and not set(checks) & set(fuzz)
    assert collected(pytester, "-m", "fuzz and processor") == ["test_mine.py::TestMapProcessor::fuzz-processor"]
    assert collected(pytester, "-m", "rstck(role='publisher')") == ["test_mine.py::TestSyncPublisher::fuzz-publisher"]
    result = pytester.runpytest("-m", "fuzz", "--strict-markers")
    result.assert_outcomes(passed=2)


def test_a_fuzz_item_fails_with_the_rule_the_trace_and_a_replay_command(pytester, monkeypatch):
    result = pytester.runpytest("--rstck-target", MUTANT, "-m", "fuzz", "--rstck-results", "rows")
    result.assert_outcomes(failed=1)
    text = result.stdout.str()
    assert "1.1 MUST: The total number of onNext" in text and "!! 1.1:" in text
    nodeid = f"rstck[{MUTANT}]::fuzz-publisher"
    replays = dict(re.findall(rf"(?s)(\d+\.\d+) MUST: .*?replay: {REPLAY_ENV}=(\S+) (?:python -m )?pytest "
                              rf"'{re.escape(nodeid)}'",
                              text))
    assert "1.1" in replays, text
    rows = [json.loads(line) for path in (pytester.path / "rows").glob("*.jsonl")
            for line in path.read_text(encoding="utf-8").splitlines()]
    assert {r["rule"] for r in rows} >= {"1.1"}
    assert {r["node_id"] for r in rows} == {nodeid}
    monkeypatch.setenv(REPLAY_ENV, replays["1.1"])
    again = pytester.runpytest("--rstck-target", MUTANT, "-m", "fuzz")
    again.assert_outcomes(failed=1)
    assert "1.1 MUST: The total number of onNext" in again.stdout.str()


def test_a_rule_selection_runs_checks_only(pytester):
    ids = collected(pytester, "--rstck-target", "rstck.reference.targets:sync_publisher", "--rstck-rules", "1.*")
    assert ids and not any("fuzz" in i for i in ids)
