"""What the plugin's items report: their result rows into the results file of this pytest process (one per xdist
worker: rstck/execution/results.py), onto their setup report (xdist carries them to the controller), and from
there into the HTML report and the classname of pytest's own JUnit XML."""

from __future__ import annotations

import dataclasses
import os
from typing import Any

import pytest

from rstck.core.verdict import BadInput
from rstck.execution.results import ResultsFile
from rstck.execution.rows import merge, upgrade
from rstck.plugin.options import ALLOWLIST


def record_rows(item: pytest.Item, rows: list[dict[str, Any]]) -> None:
    """An item's rows: written to the results file (--rstck-results) and reported with its setup report."""
    item.rstck_rows = rows
    results = item.config.stash[_REPORTING].results
    if results is not None:
        for row in rows:
            results.write(row)


@dataclasses.dataclass
class SeenAgain:
    """An item's findings that concern other items of its target (rstck/plugin/counting.py): the failed items it
    reported, those it found too and left for a later item to fail for, and those an earlier item reported that it
    found again ([item id, the reporter's node id]). The summary tells them once, at the end of the run."""

    reported: list[str] = dataclasses.field(default_factory=list)
    left: list[str] = dataclasses.field(default_factory=list)
    found_too: list[list[str]] = dataclasses.field(default_factory=list)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    """The item's result rows ride on its setup report, and what it saw of other items' findings on its call
    report: xdist carries them to the controller, which writes the HTML report, names the JUnit classname and
    prints the summary."""
    outcome = yield
    rows = getattr(item, "rstck_rows", None)
    if rows and call.when == "setup":
        outcome.get_result().rstck_rows = rows
    seen = getattr(item, "seen_again", None)
    if seen is not None and call.when == "call":
        outcome.get_result().rstck_seen_again = dataclasses.asdict(seen)


class Reporting:
    """The rows of one pytest process: the results file it writes (started by its first row, so a process that
    runs no item, as the xdist controller, leaves none), and the rows its items report, as the process that
    writes JUnit and the HTML report sees them (the xdist controller, or the only process)."""

    def __init__(self, config: pytest.Config):
        self.config = config
        directory = config.getoption("rstck_results", None)
        self.results = ResultsFile(directory, "pytest", _worker_id(config), option="--rstck-results") \
            if directory else None
        self.rows: list[dict[str, Any]] = []
        self.written = ""  # what became of the HTML report, for the summary
        self.notes: list[str] = []  # what the allowlist says at the end
        self.seen_again: list[tuple[str, SeenAgain]] = []  # by node id: told once, in the summary
        config.stash[_REPORTING] = self

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        seen = getattr(report, "rstck_seen_again", None)
        if seen and report.when == "call":
            self.seen_again.append((report.nodeid, SeenAgain(**seen)))
        rows = getattr(report, "rstck_rows", None)
        if not rows or report.when != "setup":
            return
        if self.config.getoption("rstck_html", None) or self.config.getoption("rstck_allow", None):
            self.rows.extend(rows)  # kept only for the report and the allowlist's last word
        from _pytest.junitxml import xml_key  # pytest's own JUnit writer: its classname is empty for our node ids

        xml = self.config.stash.get(xml_key, None)
        if xml is not None:
            from rstck.reports.junit import classname

            xml.node_reporter(report).add_attribute("classname", classname(upgrade(rows[0])))

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if self.results is not None:
            self.results.close()
        if hasattr(self.config, "workerinput"):
            return
        self._allowlist_says(session)
        html = self.config.getoption("rstck_html", None)
        if not html:
            return
        from rstck.reports.html import write_report

        rows, _ = merge([upgrade(row) for row in self.rows])
        try:
            self.written = f"rstck report: {write_report(rows, html, strict=self.config.getoption('rstck_strict'))}"
        except BadInput as exc:
            self.written = f"rstck: {exc}"
            session.exitstatus = pytest.ExitCode.USAGE_ERROR

    def _allowlist_says(self, session: pytest.Session) -> None:
        """As `rstck check --allow` ends: an expired entry fails the run by itself, a stale one is said."""
        allowlist = self.config.stash.get(ALLOWLIST, None)
        if allowlist is None or not self.rows:
            return
        ran = {rule for row in self.rows for rule in (row["rule"], row["violated"]) if rule}
        allowance = allowlist.allowance(self.rows, selected=ran)
        self.notes += [f"rstck: {message}" for message in allowance.messages()]
        if allowance.expired and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        lines = findings_seen_again(self.seen_again)
        if lines:
            terminalreporter.write_sep("=", "rstck: findings more than one item saw")
            for line in lines:
                terminalreporter.write_line(line)
        for note in self.notes:
            terminalreporter.write_line(note)
        if self.written:
            terminalreporter.write_line(self.written)


_REPORTING = pytest.StashKey[Reporting]()


def findings_seen_again(seen: list[tuple[str, SeenAgain]]) -> list[str]:
    """One line per finding that more than one item of a target saw: the item that failed for it and every other
    item that found it too (each skipped as the same finding or blocked, or passed); and a finding an item found
    beside the one it failed for that no later item failed for, which that failure stands for."""
    reporters: dict[tuple[str, str], str] = {}
    for node_id, said in seen:
        for rule in said.reported:
            reporters.setdefault((_scope(node_id), rule), node_id)
    again: dict[tuple[str, str], list[str]] = {}
    lines = []
    for node_id, said in seen:
        for rule, reporter in said.found_too:
            again.setdefault((rule, reporter), []).append(node_id)
        for rule in said.left:
            reporter = reporters.get((_scope(node_id), rule))
            if reporter is None:
                lines.append(f"{rule}: found by {node_id} too, beside the item it failed for; no other item failed "
                             f"for {rule}, so that failure stands for both")
            else:
                again.setdefault((rule, reporter), []).append(node_id)
    for (rule, reporter), node_ids in again.items():
        names = ", ".join(node_id.removeprefix(_scope(reporter) + "::") for node_id in node_ids)
        lines.append(f"{rule}: failed in {reporter}; found too by {len(node_ids)} more item"
                     f"{'s' * (len(node_ids) != 1)}: {names}")
    return lines


def _scope(node_id: str) -> str:
    """The node id of the item's target (its collector)."""
    return node_id.rpartition("::")[0]


def _worker_id(config: pytest.Config) -> str:
    workerinput = getattr(config, "workerinput", None)
    return workerinput["workerid"] if workerinput else os.environ.get("PYTEST_XDIST_WORKER", "main")
