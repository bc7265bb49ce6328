"""`rstck check jvm:CLASS --classpath DIR`, end to end, on the project's Java references (the mutants:
test_jvm_mutants.py)."""

from __future__ import annotations

import shlex
import subprocess

import pytest

from .checking import RSTCK, item_verdicts, offending


def verdicts(classes: str, factory: str, tmp_path, *rules: str) -> dict[str, str]:
    return item_verdicts(classes, f"Publishers${factory}", tmp_path, *rules)


@pytest.mark.parametrize("factory", ["Range", "Async"])
def test_the_references_pass_with_no_fail_warn_or_error(java_classes, tmp_path, factory):
    found = verdicts(java_classes, factory, tmp_path)
    assert found.get("1.1") == "pass"
    assert not {rule: v for rule, v in found.items() if v in ("fail", "warn", "error")}, offending(tmp_path)


def test_the_rerun_command_names_the_classpath_once_and_runs_as_printed(java_classes, tmp_path):
    """The adapter's own re-run arguments name --classpath, and the CLI once added it again."""
    done = subprocess.run([RSTCK, "check", "jvm:Publishers$NonPositiveIgnored", "--classpath", java_classes,
                           "--rules", "3.9"], capture_output=True, text=True, timeout=120)
    (rerun,) = {line.split("re-run:", 1)[1].strip() for line in done.stdout.splitlines() if "re-run:" in line}
    words = shlex.split(rerun)
    assert words.count("--classpath") == 1 and words[words.index("--classpath") + 1] == java_classes, rerun
    again = subprocess.run([RSTCK, *words[1:]], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert again.returncode == 1 and "--- fail: 3.9" in again.stdout, again.stdout
