"""`rstck check node-stream:...` and `pytest --rstck-target node-stream:...`: the reference is conformant, one
row per check, the stream checks beside the others in the report."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from ..node.helpers import assert_pytest_passes
from .helpers import REFERENCE, ROOT

pytestmark = pytest.mark.node


def test_rstck_check_says_the_reference_is_conformant_and_writes_rows(tmp_path):
    completed = subprocess.run([sys.executable, "-m", "rstck", "check", f"node-stream:{REFERENCE}", "--results",
                                str(tmp_path), "--html", str(tmp_path / "report.html")],
                               capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert completed.stdout.rstrip().endswith("conformant"), completed.stdout
    rows = [json.loads(line) for name in os.listdir(tmp_path) if name.endswith(".jsonl")
            for line in open(tmp_path / name, encoding="utf-8")]
    specs = {row["spec"] for row in rows}
    assert specs == {"node-stream-contract", "jsgi-stream"}
    assert {row["verdict"] for row in rows} == {"pass", "n/a"}
    assert any(row["rule"] == "jsgi.timing.2" and row["trace"] for row in rows)
    assert "node.writable.6" in (tmp_path / "report.html").read_text(encoding="utf-8")


def test_pytest_runs_the_stream_checks_as_tests_with_their_markers(pytester):
    assert_pytest_passes(pytester, "--rstck-target", f"node-stream:{REFERENCE}", "--rstck-rules", "node.writable.*",
                         "-m", "writable and must", at_least=15)
