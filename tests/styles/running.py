"""`rstck check` against a style's target, run as a user runs it: a process of its own, the target named
`tests.styles.targets:NAME`, the fuzz phase included; its result rows, reproducers and output read back."""

from __future__ import annotations

import dataclasses
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time

from .choices import Style

REPO = pathlib.Path(__file__).resolve().parent.parent.parent
RSTCK = pathlib.Path(sys.executable).parent / "rstck"
TARGETS_MODULE = "tests.styles.targets"
NOT_CONFORMANT = ("fail", "warn", "error")
# Examples per role in the fuzz phase: a quarter of the default 100 keeps a target's whole run near 2 s, and a
# style's races are provoked by the checks' own perturbation, each run.
FUZZ_EXAMPLES = 25
# Far above any run's length (2-12 s); a run that reaches it is a hang, reported with its output.
RUN_TIMEOUT_S = 300


@dataclasses.dataclass
class CheckRun:
    style: Style
    returncode: int
    rows: list[dict]
    reproducers: list[str]
    output: str
    seconds: float

    def offending(self) -> list[str]:
        """The rows that are not conformant (fail, warn, error), each with its message and trace."""
        return [f"{r['rule']} {r['check']}: {r['verdict']}\n{r['message'][:2000]}\n{r.get('trace', '')[-3000:]}"
                for r in self.rows if r["verdict"] in NOT_CONFORMANT]

    def failed_items(self) -> set[str]:
        """The items charged with a failure: a row's `violated` item, which a check of another item may have found
        (docs/reports.md), else its own."""
        return {r.get("violated") or r["rule"] for r in self.rows if r["verdict"] == "fail"}

    def caught(self, rule: str) -> bool:
        """Whether some check or fuzz row failed on `rule`'s item."""
        return rule in self.failed_items()

    def summary(self) -> str:
        return f"{self.style.name}: exit {self.returncode} in {self.seconds:.1f} s\n{self.output[-4000:]}"


def rstck_check(style: Style, *, repro: bool = True, fuzz_examples: int = FUZZ_EXAMPLES,
                env: dict | None = None) -> CheckRun:
    """`rstck check tests.styles.targets:NAME --results DIR [--repro DIR]`, in the repository's root. A finding's
    reproducer is confirmed by running it, which waits out its scenario's deadlines: `repro=False` leaves that out
    where the findings are the point and their scripts are not."""
    with tempfile.TemporaryDirectory(prefix="styles-") as scratch:
        results, repro_dir = pathlib.Path(scratch, "results"), pathlib.Path(scratch, "repro")
        command = [str(RSTCK), "check", f"{TARGETS_MODULE}:{style.name}", "--results", str(results),
                   "--fuzz-examples", str(fuzz_examples)] + (["--repro", str(repro_dir)] if repro else [])
        started = time.monotonic()
        done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=RUN_TIMEOUT_S,
                              env={**os.environ, **(env or {}), "PYTHONPATH": str(REPO)})
        seconds = time.monotonic() - started
        rows = [json.loads(line) for path in sorted(results.glob("*.jsonl")) for line in path.read_text().splitlines()
                if line.strip()]
        reproducers = sorted(p.name for p in repro_dir.glob("*")) if repro_dir.exists() else []
    return CheckRun(style, done.returncode, rows, reproducers, done.stdout + done.stderr, seconds)
