"""One count everywhere (issue: one broken rule was dozens of JUnit failures, MAY and SHOULD items among them).

For one target, every face reports the same number of failed items: the table of `rstck check`, its JUnit XML,
its HTML report, `rstck report` of its result rows (HTML and JUnit), and pytest with the plugin (its own count,
`--junitxml`, the Allure results and `--rstck-html`). A `blocked` item is a skipped testcase naming the finding and
the factory; a SHOULD or MAY item is never a JUnit failure unless strict asks for it. Under strict
(`rstck check --strict`, `--rstck-strict`) a SHOULD item not met is a failed item in every face, counted once as
every failed item is: a blocked item stays a skip.
"""

from __future__ import annotations

import dataclasses
import json
import pathlib
import re
import xml.etree.ElementTree as ET

import pytest

from rstck.cli import main

from .zoo import publishers
from .zoo.publisher_mutants import MUTANTS, publisher_target


class _DeliversBeforeAnyRequest(publishers.Subscription):
    """1.1: the first element goes out as soon as the subscriber has subscribed, before it requested anything."""

    def started(self) -> None:
        self.add_demand(1)
        super().started()


# Targets by MODULE:ATTR, as `rstck check` and `--rstck-target` take them.
delivers_before_any_request = publisher_target("delivers before any request", subscription=_DeliversBeforeAnyRequest)
_BY_NAME = {case.name: case for case in MUTANTS}
ignores_request_zero = _BY_NAME["ignores_non_positive_request"].target
completes_twice = _BY_NAME["completes_twice"].target
breaks_3_9_and_3_16_in_one_check = _BY_NAME["reentrant_request_raises"].target
recursive_delivery = _BY_NAME["recursive_delivery"].target  # fails 3.3, warns 3.3.depth-one beside it
depth_three_delivery = _BY_NAME["depth_three_delivery"].target  # warns 3.3.depth-one only

_HERE = "tests.test_one_count"
_ZOO = "tests.zoo.cli_targets"


@dataclasses.dataclass(frozen=True)
class Case:
    target: str
    rules: str
    failed: int  # failed items, as the table counts them: what every face must count too
    strict: bool = False

    def __str__(self) -> str:
        return f"{self.target.rpartition(':')[2]}{'-strict' if self.strict else ''}"


CASES = [
    # its finding stops checks of Subscriber sentences too, which are run on the publisher (2.12, 2.13)
    Case(f"{_HERE}:delivers_before_any_request", "1.1,1.2,1.7,2.12,2.13,3.4,3.10,3.14", 1),
    # an off-by-one in the demand check: one element more than requested, MAY (3.10, 3.14) and SHOULD (3.4)
    # items stopped by it
    Case(f"{_ZOO}:excess_on_next", "1.1,1.2,3.4,3.10,3.14", 1),
    Case(f"{_HERE}:ignores_request_zero", "3.9*", 1),
    Case(f"{_HERE}:completes_twice", "1.2,1.7,3.11", 1),
    # one check breaks two sentences (3.9 and 3.16): two failed items, and pytest fails two items for them
    Case(f"{_HERE}:breaks_3_9_and_3_16_in_one_check", "3.2,3.9,3.16,3.17", 3),
    Case("rstck.reference.targets:sync_publisher", "1.*,3.9*", 0),
    # a SHOULD item not met: no failure, unless strict asks for it
    Case(f"{_ZOO}:unhelpful_request_error", "3.9*", 0),
    Case(f"{_ZOO}:unhelpful_request_error", "3.9*", 1, strict=True),
    Case(f"{_HERE}:depth_three_delivery", "3.3*", 0),
    Case(f"{_HERE}:depth_three_delivery", "3.3*", 1, strict=True),
    # a MUST item failed with a SHOULD item not met beside it: strict counts both, each once
    Case(f"{_HERE}:recursive_delivery", "3.3*", 1),
    Case(f"{_HERE}:recursive_delivery", "3.3*", 2, strict=True),
    # and with a SHOULD item blocked by another finding (3.9.message by 3.9's): blocked stays a skip under strict
    Case(f"{_ZOO}:breaks_3_3_and_3_9", "3.3*,3.9*", 2),
    Case(f"{_ZOO}:breaks_3_3_and_3_9", "3.3*,3.9*", 3, strict=True),
    # strict counts the items, not the checks a finding touched: its blocked SHOULD, MAY and MUST items are none
    Case(f"{_HERE}:ignores_request_zero", "3.9*", 1, strict=True),
    Case(f"{_ZOO}:excess_on_next", "1.1,1.2,3.4,3.10,3.14", 1, strict=True),
    Case(f"{_HERE}:delivers_before_any_request", "1.1,1.2,1.7,2.12,2.13,3.4,3.10,3.14", 1, strict=True),
]


def table(out: str) -> dict[str, str]:
    """Item id -> verdict, from the table of `rstck check`."""
    found = {}
    for line in out.splitlines():
        match = re.match(r"^(\d[\w.-]*) +([A-Z]+(?: NOT)?) +(\S+)", line)
        if match:
            found[match.group(1)] = match.group(3)
    return found


def summary_failed(out: str, *, strict: bool) -> int:
    """The failed items the summary line of `rstck check` states: its `fail` count, or under --strict the count it
    gives once a SHOULD item was not met."""
    [line] = [line for line in out.splitlines() if line.startswith("rstck: ") and " items: " in line]
    under_strict = re.search(r"\((\d+) failed under --strict\)", line)
    assert bool(under_strict) == (strict and " warn" in line), line
    if under_strict:
        return int(under_strict.group(1))
    fails = re.search(r"(\d+) fail\b", line)
    return int(fails.group(1)) if fails else 0


def junit_failed(path: pathlib.Path) -> int:
    """The failed testcases of a JUnit file, checked against what its testsuites say."""
    root = ET.parse(path).getroot()
    failed = sum(case.find("failure") is not None for case in root.iter("testcase"))
    assert failed == sum(int(suite.get("failures")) for suite in root.iter("testsuite")), path
    return failed


def html_failed(path: pathlib.Path, *, strict: bool) -> int:
    """The failed items a report's headline states (one implementation), checked against its matrix's cells."""
    page = path.read_text(encoding="utf-8")
    [stated] = re.findall(r'data-failed-items="(\d+)"', page)
    assert int(stated) == len(html_failed_items(page, strict=strict)), path
    return int(stated)


def html_cells(page: str) -> dict[str, str]:
    """Item id -> the verdict of its cell in a report's matrix (one implementation)."""
    return dict(re.findall(r'<tr class="item" data-item="([^"]+)".*?<td class="cell [^"]*" data-verdict="([^"]*)"',
                           page, re.S))


def html_failed_items(page: str, *, strict: bool) -> set[str]:
    """The items of a report's matrix whose cell (one implementation) is a failure."""
    failing = ("fail", "warn") if strict else ("fail",)
    return {item for item, verdict in html_cells(page).items() if verdict in failing}


@pytest.mark.parametrize("case", CASES, ids=str)
def test_every_face_of_a_check_run_counts_the_failed_items_of_the_table(case, capsys, tmp_path):
    strict = ["--strict"] if case.strict else []
    code = main(["check", case.target, "--rules", case.rules, "--no-fuzz", "--junit", str(tmp_path / "junit.xml"),
                 "--results", str(tmp_path / "rows"), "--html", str(tmp_path / "report.html"), *strict])
    out = capsys.readouterr().out
    shown = table(out)
    failing = {"fail", "warn"} if case.strict else {"fail"}
    table_failed = sum(verdict in failing for verdict in shown.values())
    assert table_failed == case.failed, out
    assert summary_failed(out, strict=case.strict) == case.failed, out
    assert code == (1 if case.failed else 0), out
    assert junit_failed(tmp_path / "junit.xml") == case.failed
    assert html_failed(tmp_path / "report.html", strict=case.strict) == case.failed
    # the rows of the run, merged by `rstck report`, judged again: the same count
    assert main(["report", str(tmp_path / "rows"), "-o", str(tmp_path / "merged" / "index.html"), "--junit",
                 str(tmp_path / "merged" / "junit.xml"), *strict]) == 0
    capsys.readouterr()
    assert junit_failed(tmp_path / "merged" / "junit.xml") == case.failed
    assert html_failed(tmp_path / "merged" / "index.html", strict=case.strict) == case.failed
    assert_item_shape(tmp_path / "junit.xml", shown, strict=case.strict)


def assert_item_shape(path: pathlib.Path, shown: dict[str, str], *, strict: bool) -> None:
    """A testcase per item of the table, with its verdict; blocked ones skipped naming finding and factory; a
    SHOULD or MAY item never a failure unless strict; every testcase lists the checks behind it."""
    cases = {case.find("properties/property[@name='rule']").get("value"): case
             for case in ET.parse(path).getroot().iter("testcase")}
    assert set(cases) == set(shown)
    for item_id, case in cases.items():
        properties = {p.get("name"): p.get("value") for p in case.iter("property")}
        assert properties["verdict"] == shown[item_id], item_id
        assert case.findtext("system-out").count("\n") + 1 >= int(properties["checks"]) > 0, item_id
        if shown[item_id] == "blocked":
            message = case.find("skipped").get("message")
            assert re.match(r"blocked: .* was stopped by a [\d.]+ fail found on the publisher", message), message
        if case.find("failure") is not None:
            assert properties["level"] in ("MUST", "MUST NOT", "REQUIRED") or (strict and shown[item_id] == "warn")
        if shown[item_id] == "warn" and not strict:
            assert case.find("failure") is None and case.findtext("system-out").startswith("warn: ")


@pytest.mark.parametrize("case", CASES, ids=str)
def test_pytest_counts_as_many_failed_items_in_every_face(case, pytester):
    strict = ["--rstck-strict"] if case.strict else []
    reprec = pytester.inline_run("--rstck-target", case.target, "--rstck-rules", case.rules, "-p", "no:randomly",
                                 "--junitxml=junit.xml", "--alluredir=allure", "--rstck-html=report.html", *strict)
    failed = [r for r in reprec.getreports("pytest_runtest_logreport") if r.when == "call" and r.failed]
    assert len(failed) == case.failed, [r.nodeid for r in failed]
    assert reprec.ret == (1 if case.failed else 0)
    assert junit_failed(pytester.path / "junit.xml") == case.failed
    statuses = [json.loads(path.read_text())["status"] for path in (pytester.path / "allure").glob("*-result.json")]
    assert statuses and statuses.count("failed") == case.failed, statuses
    assert html_failed(pytester.path / "report.html", strict=case.strict) == case.failed
    # each failed pytest item counts for one failed item of the report: its own, or the one it names as violated
    counted = []
    for testcase in ET.parse(pytester.path / "junit.xml").getroot().iter("testcase"):
        if testcase.find("failure") is not None:
            properties = {p.get("name"): p.get("value") for p in testcase.iter("property")}
            counted.append(properties.get("violated", properties["rule"]))
    page = (pytester.path / "report.html").read_text(encoding="utf-8")
    assert sorted(counted) == sorted(html_failed_items(page, strict=case.strict))
    assert_blocked_items_skipped(pytester.path / "junit.xml", page)


def assert_blocked_items_skipped(path: pathlib.Path, page: str) -> None:
    """Strict or not, a blocked item of the report fails no pytest item for itself: a check of it that another
    item's finding stopped is skipped naming the finding and the factory, or, if it was the first to see that
    finding, fails for that other item (named as `violated`); its other checks pass."""
    blocked = {item for item, verdict in html_cells(page).items() if verdict == "blocked"}
    cases: dict[str, list[ET.Element]] = {}
    for testcase in ET.parse(path).getroot().iter("testcase"):
        properties = {p.get("name"): p.get("value") for p in testcase.iter("property")}
        if "rule" in properties:
            cases.setdefault(properties["rule"], []).append(testcase)
    for item_id in blocked:
        stopped = 0
        for testcase in cases[item_id]:
            properties = {p.get("name"): p.get("value") for p in testcase.iter("property")}
            skipped = testcase.find("skipped")
            if testcase.find("failure") is not None:
                assert properties.get("violated", item_id) != item_id, item_id
            elif skipped is not None:
                assert re.match(r"blocked: .* was stopped by another item's finding, reported by .*: a [\d.]+ fail "
                                r"found on the publisher", skipped.get("message")), (item_id, skipped.get("message"))
            else:
                assert properties["verdict"] == "pass", item_id
                continue
            stopped += 1
        assert stopped, item_id


FOUND_BY_FUZZING = f"{_ZOO}:clamps_demand_asked_in_on_subscribe"  # its 3.8 defect is the fuzz phase's to find


def test_a_finding_of_the_fuzz_phase_counts_for_its_item_in_every_face(capsys, tmp_path):
    """The fuzz phase's row joins its item's checks: one item, however many checks and fuzz examples found it."""
    main(["check", FOUND_BY_FUZZING, "--junit", str(tmp_path / "junit.xml"), "--html", str(tmp_path / "report.html")])
    shown = table(capsys.readouterr().out)
    failed = sum(verdict == "fail" for verdict in shown.values())
    assert shown["3.8"] == "fail"
    assert junit_failed(tmp_path / "junit.xml") == html_failed(tmp_path / "report.html", strict=False) == failed
    [case] = [c for c in ET.parse(tmp_path / "junit.xml").getroot().iter("testcase")
              if c.find("properties/property[@name='rule']").get("value") == "3.8"]
    assert "fuzz-publisher" in case.findtext("system-out")


def test_pytest_counts_the_fuzz_items_finding_once_in_every_face(pytester):
    reprec = pytester.inline_run("--rstck-target", FOUND_BY_FUZZING, "-m", "fuzz", "-p", "no:randomly",
                                 "--junitxml=junit.xml", "--alluredir=allure", "--rstck-html=report.html")
    failed = [r for r in reprec.getreports("pytest_runtest_logreport") if r.when == "call" and r.failed]
    assert [r.nodeid.rpartition("::")[2] for r in failed] == ["fuzz-publisher"]
    statuses = [json.loads(path.read_text())["status"] for path in (pytester.path / "allure").glob("*-result.json")]
    assert statuses == ["failed"]
    assert junit_failed(pytester.path / "junit.xml") == html_failed(pytester.path / "report.html", strict=False) == 1
