"""The pytest plugin: checks as tagged items, from --rstck-target or a Verification class."""

from __future__ import annotations

import json

import pytest

from rstck.execution.plan import plan
from rstck.core.catalog import load_catalog
from rstck.core.target import load_target

from .zoo import cli_targets  # noqa: F401  (imported once, so inner runs reuse it)

REFERENCE = "rstck.reference.targets:sync_publisher"
MUTANT = "tests.zoo.cli_targets:excess_on_next"

VERIFICATION_MODULE = """
import rstck
from rstck.reference.targets import sync_publisher


class TestSyncPublisher(rstck.PublisherVerification):
    target = sync_publisher


class TestOnlyRule39(rstck.PublisherVerification):
    target = sync_publisher
    rules = "3.9"
"""


def planned(spec: str, rules: str | None = None):
    return plan(load_target(spec), rules=rules)


def collected_ids(pytester: pytest.Pytester, *args: str) -> list[str]:
    """Node ids of the items selected for running (after -m and -k)."""
    reprec = pytester.inline_run("--collect-only", *args)
    return [item.nodeid for item in reprec.getcall("pytest_collection_finish").session.items]


def test_rstck_target_runs_every_check_and_the_reference_passes(pytester):
    result = pytester.runpytest("--rstck-target", REFERENCE, "--strict-markers")
    outcomes = result.parseoutcomes()
    assert result.ret == 0
    assert outcomes.get("failed", 0) == outcomes.get("errors", 0) == 0
    assert outcomes["passed"] + outcomes.get("skipped", 0) == len(planned(REFERENCE)) + 1  # + fuzz-publisher


def test_collect_only_counts_the_checks(pytester):
    result = pytester.runpytest("--rstck-target", REFERENCE, "--collect-only", "-q")
    result.stdout.fnmatch_lines([f"{len(planned(REFERENCE)) + 1} tests collected*"])  # + fuzz-publisher


def test_item_ids_carry_the_rule_id_and_the_check_name(pytester):
    ids = collected_ids(pytester, "--rstck-target", REFERENCE, "-m", "not fuzz")
    assert ids == [f"rstck[{REFERENCE}]::{p.check.rule}-{p.check.name}" for p in planned(REFERENCE)]
    assert f"rstck[{REFERENCE}]::3.9-request_zero_signals_on_error" in ids


def test_a_verification_subclass_runs_its_checks(pytester):
    pytester.makepyfile(test_mine=VERIFICATION_MODULE)
    ids = collected_ids(pytester)
    whole = [i for i in ids if "::TestSyncPublisher::" in i and not i.endswith("::fuzz-publisher")]
    only_39 = [i for i in ids if "::TestOnlyRule39::" in i]
    assert len(whole) == len(planned(REFERENCE))
    assert only_39 == [f"test_mine.py::TestOnlyRule39::3.9-{p.check.name}" for p in planned(REFERENCE, "3.9")]
    result = pytester.runpytest("--strict-markers")
    assert result.ret == 0
    outcomes = result.parseoutcomes()
    assert outcomes["passed"] + outcomes.get("skipped", 0) == len(ids)


def test_marker_expression_selects_exactly_the_items_of_one_rule(pytester):
    ids = collected_ids(pytester, "--rstck-target", REFERENCE, "-m", "rstck(rule='3.9')")
    assert ids == [f"rstck[{REFERENCE}]::3.9-{p.check.name}" for p in planned(REFERENCE, "3.9")]
    assert len(ids) >= 2


def test_level_and_role_markers_select(pytester):
    catalog = load_catalog()
    must = [p for p in planned(REFERENCE) if catalog[p.check.rule].level_marker == "must"]
    ids = collected_ids(pytester, "--rstck-target", REFERENCE, "-m", "must", "--strict-markers")
    assert len(ids) == len(must)
    should = collected_ids(pytester, "--rstck-target", REFERENCE, "-m", "should and subscription")
    assert should == [f"rstck[{REFERENCE}]::{p.check.rule}-{p.check.name}" for p in planned(REFERENCE)
                      if p.check.role == "subscription" and catalog[p.check.rule].level_marker == "should"]
    assert any("3.9.message" in i for i in should)


def test_markers_are_registered(pytester):
    result = pytester.runpytest("--markers")
    result.stdout.fnmatch_lines(["@pytest.mark.rstck(rule, spec, level):*", "@pytest.mark.publisher:*",
                                 "@pytest.mark.subscription:*", "@pytest.mark.must:*", "@pytest.mark.should:*",
                                 "@pytest.mark.may:*"], consecutive=False)
    pytester.makepyfile(test_marked="""
        import pytest

        @pytest.mark.rstck(rule="3.9", spec="reactive-streams", level="MUST")
        @pytest.mark.subscription
        @pytest.mark.must
        def test_marked():
            pass
    """)
    assert pytester.runpytest("--strict-markers").ret == 0


def test_a_mutant_fails_the_items_of_its_rule_with_the_rule_text(pytester):
    reprec = pytester.inline_run("--rstck-target", MUTANT)
    failures = reprec.getfailures()
    assert failures
    rule_text = load_catalog()["1.1"].text
    assert any("::1.1-" in report.nodeid for report in failures)
    for report in failures:
        assert f"1.1 MUST: {rule_text}" in report.longreprtext, report.nodeid
    passed, _, _ = reprec.listoutcomes()
    assert passed


def test_a_factory_that_raises_errors_its_items(pytester):
    reprec = pytester.inline_run("--rstck-target", "tests.zoo.cli_targets:factory_raises", "--rstck-rules", "1.1")
    failed = [r for r in reprec.getreports("pytest_runtest_logreport") if r.failed]
    assert len(failed) == len(planned("tests.zoo.cli_targets:factory_raises", "1.1"))
    for report in failed:  # errors in setup, not failures of the implementation
        assert report.when == "setup"
        assert "create_publisher(10) raised RuntimeError" in report.longreprtext


def test_a_should_item_warns_and_fails_only_under_strict(pytester):
    spec = "tests.zoo.cli_targets:unhelpful_request_error"
    lenient = pytester.runpytest("--rstck-target", spec, "--rstck-rules", "3.9.message",
                                 "-W", "ignore::pytest.PytestAssertRewriteWarning")
    lenient.assert_outcomes(passed=1, warnings=1)
    lenient.stdout.fnmatch_lines(["*RstckWarning: 3.9.message SHOULD: *"])
    strict = pytester.runpytest("--rstck-target", spec, "--rstck-rules", "3.9.message", "--rstck-strict")
    strict.assert_outcomes(failed=1)


def test_bad_target_and_bad_rules_are_usage_errors(pytester):
    result = pytester.runpytest("--rstck-target", "no_such_module_here:target")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: --rstck-target: target 'no_such_module_here:target': cannot import*"])
    result = pytester.runpytest("--rstck-target", REFERENCE, "--rstck-rules", "9.99")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: --rstck-rules: '9.99' matches no catalogue item*"])
    for bad in ("nan", "inf", "1e308", "0"):
        result = pytester.runpytest("--rstck-target", REFERENCE, "--rstck-timeout", bad)
        assert result.ret == pytest.ExitCode.USAGE_ERROR
        result.stderr.fnmatch_lines(["ERROR: --rstck-timeout must be a number of seconds above 0 and at most 3600*"])


def test_results_option_writes_a_row_per_item(pytester):
    pytester.runpytest("--rstck-target", REFERENCE, "--rstck-rules", "3.*", "--rstck-results", "results")
    rows = [json.loads(line) for path in (pytester.path / "results").glob("*.jsonl")
            for line in path.read_text(encoding="utf-8").splitlines()]
    assert sorted(r["node_id"] for r in rows) == sorted(
        f"rstck[{REFERENCE}]::{p.check.rule}-{p.check.name}" for p in planned(REFERENCE, "3.*"))
    for row in rows:
        assert {"target", "spec", "rule", "level", "check", "verdict", "duration_s", "message", "trace"} <= set(row)


def test_runs_under_xdist(pytester):
    pytester.makepyfile(test_mine=VERIFICATION_MODULE)
    result = pytester.runpytest_subprocess("--rstck-target", REFERENCE, "-n", "2", "--rstck-results", "results",
                                           "--strict-markers", "-m", "not fuzz", timeout=120)
    expected = len(planned(REFERENCE)) * 2 + len(planned(REFERENCE, "3.9"))
    outcomes = result.parseoutcomes()
    assert result.ret == 0, result.stdout.str()
    assert outcomes["passed"] + outcomes.get("skipped", 0) == expected
    files = {path.name for path in (pytester.path / "results").glob("*.jsonl")}
    assert {"pytest-gw0.jsonl", "pytest-gw1.jsonl"} <= files  # one file per worker
    rows = sum(len(path.read_text(encoding="utf-8").splitlines())
               for path in (pytester.path / "results").glob("*.jsonl"))
    assert rows == expected


def test_pytest_leaves_the_kits_own_modules_unrewritten(pytester):
    # An installed (not editable) rstck is marked for assertion rewriting as the distribution of a
    # pytest plugin; register_assert_rewrite marks it the same way here.
    pytester.makeconftest("import pytest\npytest.register_assert_rewrite('rstck')\n")
    pytester.makepyfile(test_loader="""
        def test_loader():
            import rstck.execution.runner
            assert type(rstck.execution.runner.__loader__).__name__ == "SourceFileLoader"
    """)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:rstck", timeout=120)
    assert result.ret == 0, result.stdout.str()


def test_a_run_inside_a_test_process_does_not_end_it_for_threads_an_earlier_test_left(pytester):
    """A non-daemon thread of an implementation an earlier test checked (a module-level pool's worker) is alive when
    a pytest run inside the same process ends: that run left nothing behind, so it must not end the process (it
    did: the host, an xdist worker, went down)."""
    import threading

    from rstck.core.process_end import note_implementation_threads

    release = threading.Event()
    leftover = threading.Thread(target=release.wait, name="earlier-tests-pool-worker")  # not a daemon
    leftover.start()
    note_implementation_threads([leftover])
    try:
        reprec = pytester.inline_run("--rstck-target", MUTANT, "--rstck-rules", "1.1")
        assert reprec.getfailures(), "the run ended, and its host process is still here to count it"
    finally:
        release.set()
        leftover.join()
