"""`rstck check jvm:CLASS --classpath DIR`, end to end, on the project's Java references and mutants."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

RSTCK = os.path.join(os.path.dirname(sys.executable), "rstck")

# Each mutant, and the item its fault breaks.
MUTANTS = {
    "OverDelivery": "1.1",
    "SignalAfterTerminal": "1.7",
    "NonPositiveIgnored": "3.9",
    "RequestThrows": "3.16",
    "NullAccepted": "1.9",
}


def verdicts(classes: str, factory: str, tmp_path, *rules: str) -> dict[str, str]:
    """The item verdicts of `rstck check jvm:Publishers$FACTORY`, from its results file."""
    command = [RSTCK, "check", f"jvm:Publishers${factory}", "--classpath", classes, "--results", str(tmp_path)]
    command += ["--rules", ",".join(rules)] if rules else []
    subprocess.run(command, capture_output=True, text=True, timeout=120)
    rows = [json.loads(line) for path in tmp_path.glob("*.jsonl") for line in path.read_text().splitlines()]
    found: dict[str, str] = {}
    for row in rows:
        rule, verdict = row.get("rule"), row.get("verdict")
        if rule and verdict and found.get(rule) not in ("fail", "error"):
            found[rule] = verdict
    return found


@pytest.mark.parametrize("factory", ["Range", "Async"])
def test_the_references_pass_with_no_fail_warn_or_error(java_classes, tmp_path, factory):
    found = verdicts(java_classes, factory, tmp_path)
    assert found.get("1.1") == "pass"
    assert not {rule: v for rule, v in found.items() if v in ("fail", "warn", "error")}


@pytest.mark.parametrize("factory, rule", MUTANTS.items())
def test_each_mutant_is_caught_on_its_item(java_classes, tmp_path, factory, rule):
    assert verdicts(java_classes, factory, tmp_path, rule).get(rule) == "fail"
