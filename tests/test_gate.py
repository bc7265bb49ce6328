"""The gate: exit codes, the allowlist of known deviations (allowed, expired, stale, malformed), rule
exclusions, and the JUnit XML and Allure results that CI dashboards read."""

from __future__ import annotations

import json
import re
import pathlib
import textwrap
import xml.etree.ElementTree as ET

import pytest

from rstck.cli import main
from rstck.execution.results import ResultsFile
from rstck.reports.items import item_verdicts

from .zoo import cli_targets  # noqa: F401  (imported once, so inner pytest runs reuse it)

FAILS_1_1 = "tests.zoo.cli_targets:excess_on_next"
WARNS_3_9 = "tests.zoo.cli_targets:unhelpful_request_error"
CONFORMANT = "rstck.reference.targets:sync_publisher"
BROKEN_FACTORY = "tests.zoo.cli_targets:factory_raises"


def run(capsys, *argv: str) -> tuple[int, str, list[str]]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err.splitlines()


def allowlist(tmp_path: pathlib.Path, text: str) -> str:
    path = tmp_path / "deviations.toml"
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return str(path)


def entry(rule: str = "1.1", target: str = FAILS_1_1, expires: str = "2999-12-31",
          reason: str = "known; fixed in 2.0") -> str:
    return f'[[deviation]]\nrule = "{rule}"\ntarget = "{target}"\nreason = "{reason}"\nexpires = {expires}\n'


def table_verdict(out: str, item: str) -> str:
    for line in out.splitlines():
        fields = line.split()
        if fields and fields[0] == item:
            return fields[2]
    raise AssertionError(f"{item} not in the table:\n{out}")


@pytest.mark.parametrize(("target", "code"), [(CONFORMANT, 0), (FAILS_1_1, 1), (BROKEN_FACTORY, 2)])
def test_exit_codes(capsys, target, code):
    assert run(capsys, "check", target, "--rules", "1.1")[0] == code


def test_an_allowed_failure_shows_as_allowed_and_passes_the_gate(capsys, tmp_path):
    allow = allowlist(tmp_path, entry())
    code, out, _ = run(capsys, "check", FAILS_1_1, "--rules", "1.1", "--allow", allow, "--results",
                       str(tmp_path / "rows"), "--html", str(tmp_path / "report.html"), "--junit",
                       str(tmp_path / "junit.xml"))
    assert code == 0, out
    assert table_verdict(out, "1.1") == "allowed"
    assert "allowed (allowed by" in out and "— conformant" in out.splitlines()[-1]
    assert "allowed" in out.splitlines()[-1]
    rows = [json.loads(line) for path in (tmp_path / "rows").glob("*.jsonl") for line in path.read_text().splitlines()]
    failing = [row for row in rows if row["rule"] == "1.1" and row["verdict"] != "pass"]
    assert failing and all(row["verdict"] == "allowed" for row in failing)
    assert failing[0]["deviation"]["verdict"] == "fail"
    assert failing[0]["deviation"]["reason"] == "known; fixed in 2.0"
    assert 'data-verdict="allowed"' in (tmp_path / "report.html").read_text()
    cases = ET.parse(tmp_path / "junit.xml").getroot().iter("testcase")
    allowed = [c for c in cases if c.find("properties/property[@value='allowed']") is not None]
    assert allowed and all(c.find("failure") is None for c in allowed)
    assert "allowed by" in allowed[0].findtext("system-out")


def test_each_row_is_written_once_as_the_allowlist_judged_it(capsys, tmp_path, monkeypatch):
    written = []
    write = ResultsFile.write
    monkeypatch.setattr(ResultsFile, "write", lambda self, row: (written.append(dict(row)), write(self, row))[1])
    code, _, _ = run(capsys, "check", FAILS_1_1, "--rules", "1.1", "--allow", allowlist(tmp_path, entry()),
                     "--results", str(tmp_path / "rows"))
    assert code == 0
    [path] = (tmp_path / "rows").glob("*.jsonl")
    assert [json.loads(line) for line in path.read_text().splitlines()] == written
    assert len({(row["rule"], row["check"]) for row in written}) == len(written)  # no check written twice
    assert {row["verdict"] for row in written} == {"allowed"}  # as judged, from the first write on


def test_the_item_verdicts_are_computed_once_for_table_summary_and_report(capsys, tmp_path, monkeypatch):
    calls = []

    def counted(*args, **kwargs):
        calls.append(args)
        return item_verdicts(*args, **kwargs)

    monkeypatch.setattr("rstck.cli.check.item_verdicts", counted)
    monkeypatch.setattr("rstck.reports.html.item_verdicts", counted)
    code, out, _ = run(capsys, "check", FAILS_1_1, "--rules", "1.1", "--html", str(tmp_path / "report.html"))
    assert code == 1 and table_verdict(out, "1.1") == "fail"
    assert len(calls) == 1
    page = (tmp_path / "report.html").read_text()
    assert re.search(r'<tr class="item" data-item="1\.1".*?data-verdict="fail"', page, re.S)


def test_rule_and_target_may_be_globs(capsys, tmp_path):
    allow = allowlist(tmp_path, entry(rule="1.*", target="*excess_on_next"))
    code, out, _ = run(capsys, "check", FAILS_1_1, "--rules", "1.1", "--allow", allow)
    assert code == 0 and table_verdict(out, "1.1") == "allowed"


def test_an_expired_entry_fails_the_gate_and_says_so(capsys, tmp_path):
    allow = allowlist(tmp_path, entry(expires="2001-02-03"))
    code, out, _ = run(capsys, "check", FAILS_1_1, "--rules", "1.1", "--allow", allow)
    assert code == 1
    assert table_verdict(out, "1.1") == "fail"  # the failure counts again
    assert "expired on 2001-02-03" in out and "deviations.toml:1" in out


def test_an_expired_entry_fails_the_gate_even_where_nothing_fails(capsys, tmp_path):
    allow = allowlist(tmp_path, entry(target=CONFORMANT, expires="2001-02-03"))
    code, out, _ = run(capsys, "check", CONFORMANT, "--rules", "1.1", "--allow", allow)
    assert code == 1
    assert out.splitlines()[-1].endswith("NOT CONFORMANT (1 allowlist entry expired)")


def test_an_entry_that_no_longer_fails_is_stale(capsys, tmp_path):
    allow = allowlist(tmp_path, entry(target=CONFORMANT))
    code, out, _ = run(capsys, "check", CONFORMANT, "--rules", "1.1", "--allow", allow)
    assert code == 0
    assert "deviations.toml:1 (1.1 for rstck.reference.targets:sync_publisher) is stale" in out


def test_entries_for_other_targets_or_unselected_rules_are_left_alone(capsys, tmp_path):
    allow = allowlist(tmp_path, entry(target="other.module:target", expires="2001-02-03") + "\n"
                      + entry(rule="3.9", target=CONFORMANT))
    code, out, _ = run(capsys, "check", CONFORMANT, "--rules", "1.1", "--allow", allow)
    assert code == 0
    assert "stale" not in out and "expired" not in out


def test_a_warning_may_be_allowed_too(capsys, tmp_path):
    allow = allowlist(tmp_path, entry(rule="3.9.message", target=WARNS_3_9))
    code, out, _ = run(capsys, "check", WARNS_3_9, "--rules", "3.9*", "--allow", allow)
    assert code == 0 and table_verdict(out, "3.9.message") == "allowed"


@pytest.mark.parametrize(("text", "message"), [
    ('[[deviation]]\nrule = "1.1"\nrule = "1.2"\n', "deviations.toml: not valid TOML (Cannot overwrite a value (at line 3, column 13))"),
    ('[[deviation]]\nrule = "1.1"\ntarget = "t"\nexpires = 2030-01-01\n', "deviations.toml:1: the deviation has no 'reason'"),
    (entry() + '\n' + entry(expires='"soon"'), "deviations.toml:11: 'expires' must be a date such as 2027-03-31, got 'soon'"),
    (entry(rule="9.99"), "deviations.toml:2: rule '9.99' matches no catalogue item; `rstck rules` lists them"),
    (entry() + 'owner = "me"\n', "deviations.toml:6: unknown key 'owner'; a deviation has rule, target, reason, expires"),
    (entry(reason=" "), "deviations.toml:4: 'reason' must be a non-empty string"),
    ('[[allow]]\nrule = "1.1"\n', "deviations.toml: unknown table 'allow'; entries are [[deviation]] tables"),
])
def test_a_malformed_allowlist_is_a_one_line_error_naming_the_line(capsys, tmp_path, text, message):
    allow = allowlist(tmp_path, text)
    code, out, err = run(capsys, "check", CONFORMANT, "--allow", allow)
    assert code == 2 and out == ""  # nothing ran
    assert len(err) == 1 and err[0] == f"rstck: {tmp_path / message}", err


def test_a_missing_allowlist_is_bad_input(capsys, tmp_path):
    code, _, err = run(capsys, "check", CONFORMANT, "--allow", str(tmp_path / "absent.toml"))
    assert code == 2 and err == [f"rstck: --allow {tmp_path / 'absent.toml'}: cannot read (No such file or directory)"]


def test_rules_accept_exclusions(capsys):
    code, out, _ = run(capsys, "check", CONFORMANT, "--rules", "1.*,!1.1", "--list")
    rules = {line.split()[0] for line in out.splitlines()[:-1]}
    assert code == 0 and "1.1" not in rules and "1.9" in rules
    code, out, _ = run(capsys, "check", CONFORMANT, "--rules", "!1.*", "--list")  # exclusions alone: from all
    rules = {line.split()[0] for line in out.splitlines()[:-1]}
    assert code == 0 and not any(rule.startswith("1.") for rule in rules) and "3.9" in rules


@pytest.mark.parametrize(("rules", "error"), [
    ("*,!9.99", "rstck: --rules: '9.99' matches no catalogue item; `rstck rules` lists the ids"),
    ("1.1,!1.1", "rstck: --rules: '1.1,!1.1' leaves no catalogue item to check"),
])
def test_a_bad_exclusion_is_bad_input(capsys, rules, error):
    code, _, err = run(capsys, "check", CONFORMANT, "--rules", rules)
    assert code == 2 and err == [error]


def test_junit_of_a_check_run_carries_rule_verdict_and_evidence(capsys, tmp_path):
    junit = tmp_path / "out.xml"
    code, _, _ = run(capsys, "check", FAILS_1_1, "--rules", "1.1", "--junit", str(junit))
    assert code == 1
    suite = ET.parse(junit).getroot().find("testsuite")
    failed = [c for c in suite.iter("testcase") if c.find("failure") is not None]
    assert failed and int(suite.get("failures")) == len(failed)
    case = failed[0]
    properties = {p.get("name"): p.get("value") for p in case.iter("property")}
    assert properties["rule"] == "1.1" and properties["level"] == "MUST" and properties["verdict"] == "fail"
    assert properties["spec"] == "reactive-streams"
    # one testcase per item: the implementation and the item's section
    assert case.get("classname") == f"{cli_targets.excess_on_next.name}.Publisher"
    assert case.get("name").startswith("1.1: The total number of onNext")
    failure = case.find("failure")
    # the item's reason, as the table gives it: the check that decided it, and what it found
    assert failure.get("message").startswith("on_next_count_never_exceeds_requested: 1.1: expected")
    assert "trace:" in failure.text and "on_next" in failure.text


def test_junit_shows_a_warning_as_a_warning_not_a_skip(capsys, tmp_path):
    junit = tmp_path / "out.xml"
    run(capsys, "check", WARNS_3_9, "--rules", "3.9*", "--junit", str(junit))
    cases = list(ET.parse(junit).getroot().iter("testcase"))
    warned = [c for c in cases if c.find("properties/property[@value='warn']") is not None]
    assert warned and all(c.find("skipped") is None for c in warned)
    assert warned[0].findtext("system-out").startswith("warn: ")


def test_pytest_junit_names_target_and_role_and_carries_properties(pytester):
    result = pytester.runpytest("--rstck-target", FAILS_1_1, "--rstck-rules", "1.1,3.9*", "--junitxml=out.xml")
    assert result.ret == 1
    cases = list(ET.parse(pytester.path / "out.xml").getroot().iter("testcase"))
    assert cases
    for case in cases:
        properties = {p.get("name"): p.get("value") for p in case.iter("property")}
        assert {"rule", "spec", "level", "verdict"} <= set(properties), properties
        target, _, role = case.get("classname").rpartition(".")
        assert target == cli_targets.excess_on_next.name and role in ("publisher", "subscription"), case.get("classname")
    failed = [c for c in cases if c.find("failure") is not None]
    assert failed and all({p.get("name"): p.get("value") for p in c.iter("property")}["verdict"] == "fail"
                          for c in failed)
    assert "trace:" in failed[0].find("failure").text


def test_allure_results_carry_labels_link_and_trace(pytester):
    result = pytester.runpytest("--rstck-target", FAILS_1_1, "--rstck-rules", "1.1", "--alluredir=allure")
    assert result.ret == 1
    results = [json.loads(p.read_text()) for p in (pytester.path / "allure").glob("*-result.json")]
    assert results
    failed = next(r for r in results if r["status"] == "failed")
    labels = {(label["name"], label["value"]) for label in failed["labels"]}
    assert {("epic", "reactive-streams"), ("feature", "Publisher"), ("story", "1.1"),
            ("severity", "critical")} <= labels
    assert failed["links"][0]["url"].startswith("https://github.com/reactive-streams/reactive-streams-js")
    attachments = {a["name"]: a["source"] for a in failed["attachments"]}
    trace = (pytester.path / "allure" / attachments["trace"]).read_text()
    assert trace.startswith("  1") or " 1 " in trace[:10]


def test_pytest_writes_the_html_report_from_its_xdist_workers(pytester):
    result = pytester.runpytest_subprocess("-p", "xdist", "-n", "2", "--rstck-target", CONFORMANT,
                                           "--rstck-rules", "1.9,3.9", "--rstck-html", "out/report.html")
    assert result.ret == 0
    result.stdout.fnmatch_lines([f"rstck report: {pathlib.Path('out/report.html')}"])
    page = (pytester.path / "out" / "report.html").read_text()
    cells = set(re.findall(r'<tr class="item" data-item="([^"]+)"', page))
    assert cells == {"1.9", "3.9"} and 'data-verdict="pass"' in page
