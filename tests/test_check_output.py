"""What `rstck check` and the pytest items print when things go wrong: each observed problem, reproduced."""

from __future__ import annotations

import json
import pathlib
import re

from rstck.cli import main

REPO = pathlib.Path(__file__).resolve().parent.parent


def check(capsys, *argv: str) -> tuple[int, str]:
    code = main(["check", *argv, "--no-fuzz"])
    return code, capsys.readouterr().out


def table(out: str) -> dict[str, str]:
    """Item id -> verdict, from the table."""
    rows = {}
    for line in out.splitlines():
        match = re.match(r"^(\d[\w.-]*|async\.\S+) +([A-Z]+(?: NOT)?) +(\S+)", line)
        if match:
            rows[match.group(1)] = match.group(3)
    return rows


def test_the_table_and_the_rows_agree_on_every_item(capsys, tmp_path):
    code, out = check(capsys, "tests.zoo.cli_targets:cancel_raises", "--results", str(tmp_path))
    (path,) = tmp_path.glob("*.jsonl")
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    shown = table(out)
    for row in rows:
        charged = row["violated"] or row["rule"]
        if row["verdict"] == "fail":
            assert shown[charged] == "fail", (charged, out)
            decided = {other["rule"] for other in row.get("also_charged", ())}
            if charged != row["rule"] and row["rule"] not in decided:  # stopped before it could decide
                assert shown[row["rule"]] in ("fail", "blocked"), (row["rule"], out)


def test_the_summary_counts_what_the_table_shows(capsys):
    code, out = check(capsys, "tests.zoo.cli_targets:cancel_raises")
    shown = table(out)
    summary = out.splitlines()[-1]
    for verdict in {"pass", "fail", "blocked"} & set(shown.values()):
        count = sum(v == verdict for v in shown.values())
        assert re.search(rf"\b{count} {verdict}\b", summary), (verdict, count, summary)


def test_blocked_is_documented():
    for doc in ("README.md", "docs/verdicts.md"):
        assert "`blocked`" in (REPO / doc).read_text(encoding="utf-8"), doc


def test_a_raising_factory_prints_one_block_with_the_users_traceback(capsys):
    code, out = check(capsys, "tests.zoo.cli_targets:factory_raises")
    assert code == 2
    # the first table row; the one block: its message, the user's line and the exception
    assert out.count("this factory is broken on purpose") <= 4
    assert "cli_targets.py" in out and "_broken_factory" in out  # the user's own frame
    assert "rstck/execution/runner.py" not in out and "rstck/adapters" not in out  # none of the kit's
    assert re.search(r"same error in \d+ more checks", out)


def test_a_pytest_setup_error_prints_the_users_traceback_not_pytests(pytester):
    result = pytester.runpytest("--rstck-target", "tests.zoo.cli_targets:factory_raises", "--rstck-rules", "1.1",
                                "-m", "not fuzz", "-W", "ignore::pytest.PytestAssertRewriteWarning")
    text = result.stdout.str()
    errors = len(re.findall(r"^_+ ERROR at setup of ", text, re.M))
    assert errors >= 1
    assert "_broken_factory" in text
    assert "_pytest/" not in text and "pluggy/" not in text
    assert len(text.splitlines()) < 40 * errors + 20


def test_a_1_3_failure_names_the_signal_it_overlapped(capsys):
    code, out = check(capsys, "tests.zoo.cli_targets:unserialized_executor_delivery", "--rules", "1.3")
    assert code == 1
    assert re.search(r"while #\d+ \S+\.on_next\(\d+\)( \(on [^)]*\))? was still running", out), out


def test_progress_names_the_check_and_the_elapsed_time(capsys, monkeypatch):
    import sys

    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    main(["check", "rstck.reference.targets:sync_publisher", "--rules", "1.1", "--no-fuzz"])
    err = capsys.readouterr().err
    assert re.search(r"1\.1 on_next_count_never_exceeds_requested .*\d+\.\d s", err), err


def test_a_trace_says_what_its_names_stand_for_with_the_implementations_classes(capsys, tmp_path):
    """The kit's names (probe#1, sub#1, publisher) were explained nowhere; the user's classes were not shown."""
    code, out = check(capsys, "tests.zoo.cli_targets:excess_on_next", "--rules", "1.1", "--results", str(tmp_path))
    assert code == 1
    where = out[out.index("  where:"):].splitlines()
    assert any(line.split()[:1] == ["probe#1"] and "a subscriber of the kit's" in line for line in where)
    assert any(line.split()[:1] == ["sub#1"] and "(class tests.zoo.publishers.ExcessOnNext)" in line for line in where)
    assert any(line.split()[:1] == ["publisher"] and "(class tests.zoo.publishers.Publisher)" in line for line in where)
    rows = [json.loads(line) for path in tmp_path.glob("*.jsonl") for line in path.open()]
    assert all("probe#1" in row["legend"] for row in rows if row["trace"])
    html = tmp_path / "report.html"
    main(["report", str(tmp_path), "-o", str(html)])
    assert "tests.zoo.publishers.ExcessOnNext" in html.read_text(encoding="utf-8")


def test_the_kits_own_subscription_is_told_apart_from_the_implementations():
    from rstck.core.labels import Labels
    from rstck.core.probes import ProbeSubscription

    class Mine:
        pass

    labels = Labels()
    kits = labels.of(ProbeSubscription.__new__(ProbeSubscription), "sub")
    yours = labels.of(Mine(), "sub")
    legend = dict(line.split(maxsplit=1) for line in labels.legend(f"{kits}.request(1) {yours}.cancel()").splitlines())
    assert legend[kits] == "a subscription of the kit's, which a source handed the implementation"
    assert legend[yours].startswith("the implementation's subscription") and f"{__name__}." in legend[yours]
