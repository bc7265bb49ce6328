"""Schedule perturbation on Java threads: the race mutants of tests/jvm/java/Races.java, each caught on its item
by the check that provokes its race, and the linger ending for the reason the race needs."""

from __future__ import annotations

import json
import pathlib
import subprocess

from .checking import RSTCK

# A short deadline: the checks of 3.8 wait for the lost elements until it (a quiet window decided the settle).
DEADLINE_S = "2"


def failed_checks(classes: str, class_name: str, rule: str, results: pathlib.Path) -> dict[str, dict]:
    """The rows of the checks of `rule` that failed on `rstck check jvm:CLASS --rules RULE`, by check name."""
    subprocess.run([RSTCK, "check", f"jvm:{class_name}", "--classpath", classes, "--rules", rule, "--no-fuzz",
                    "--timeout", DEADLINE_S, "--results", str(results)], capture_output=True, text=True, timeout=120)
    rows = [json.loads(line) for path in results.glob("*.jsonl") for line in path.read_text().splitlines()]
    assert rows, "rstck check wrote no results"
    return {row["check"]: row for row in rows if row.get("rule") == rule and row.get("verdict") == "fail"}


def test_onnext_while_onsubscribe_lingers_is_caught_as_1_3(java_classes, tmp_path):
    """The probe lingers in onSubscribe until the publisher's executor thread signals it: the overlap shows in
    every run, not only when the machine's timing happens to open the window."""
    failed = failed_checks(java_classes, "Races$EarlyOnNext", "1.3", tmp_path)
    row = failed.get("signals_are_serial_while_the_probe_lingers")
    assert row is not None, sorted(failed)
    assert "inside on_subscribe: ended by signal" in row["trace"], row["trace"]


def test_a_request_lost_during_onnext_is_caught_as_3_8(java_classes, tmp_path):
    """The kit's second thread requests while onNext is in flight on the publisher's executor thread; the
    publisher's write-back after onNext loses it, and the elements it asked for never come."""
    failed = failed_checks(java_classes, "Races$LostRequest", "3.8", tmp_path)
    row = failed.get("demand_from_a_second_thread_during_a_delivery_is_added")
    assert row is not None, sorted(failed)
    assert "requests 2 on a second thread while this signal is in flight" in row["trace"], row["trace"]

