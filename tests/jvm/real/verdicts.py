"""What `rstck check jvm:FACTORY` and `rstck fuzz jvm:FACTORY` say of a real library, in the terms docs/jvm.md
("Real libraries") confirms by hand: each item's verdict, the fuzz phase's findings, and whether the phase ran
its whole budget; and two processes that keep both cores busy while a run goes on."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import pathlib
import re
import subprocess
import sys
from collections.abc import Iterator

from rstck.reports.items import item_verdicts

from ..checking import RSTCK

# Items the JVM adapter does not observe yet (docs/jvm.md): n/a or untested for every target, not the library's.
KIT_LIMITS = {"2.1.request-last", "2.4", "2.13.surfaced"}

# Per factory, each verdict of the checks other than pass, as confirmed by hand; every other item must pass.
CONFIRMED = {
    "JdkPublishers$Submission": {"2.13": "fail", "3.10": "unsupported", "3.11": "unsupported",
                                 "3.14": "unsupported"},
    # FlowAdapters around the reference Range, which gives the same 3.14 verdict on its own.
    "AdaptedPublishers$RoundTrip": {"3.14": "unsupported"},
    "AdaptedPublishers$ToReactive": {"3.14": "unsupported"},
    "NettyPublishers$Handler": {"1.11": "unsupported", "2.13": "fail", "3.10": "unsupported", "3.11": "unsupported"},
    # 2.8: HandlerSubscriber never cancels on an open channel; 2.11: the factory offers no white-box observer.
    "NettySubscribers$Handler": {"2.8": "n/a", "2.11": "n/a"},
}
# The role each factory offers, which the fuzz phase fuzzes.
ROLE = {factory: "subscriber" if factory.startswith("NettySubscribers") else "publisher" for factory in CONFIRMED}
# Per factory, each finding of the fuzz phase and of `rstck fuzz`, as confirmed by hand: none, from any seed tried
# (docs/jvm.md, Real libraries).
CONFIRMED_FUZZ: dict[str, dict[str, str]] = {factory: {} for factory in CONFIRMED}


@dataclasses.dataclass(frozen=True)
class CheckRun:
    items: dict[str, str]  # item -> verdict, as the kit's table shows it (fuzz findings included)
    fuzz_findings: dict[str, str]  # item -> verdict of the fuzz phase's rows ("" for an error of the phase itself)
    fuzz_lines: list[str]  # the phase's line per role: "fuzz publisher: 20 examples (…) in 1.2 s, no findings"
    output: str

    def unconfirmed(self, factory: str) -> dict[str, str | None]:
        """The items whose verdict is not the one confirmed by hand for `factory`, and not a limit of the kit's."""
        expected = CONFIRMED[factory]
        return {item: verdict for item, verdict in self.items.items() if verdict != expected.get(item, "pass") and not (
            item not in expected and verdict in ("n/a", "untested") and item in KIT_LIMITS)} | {
            item: None for item in expected if item not in self.items}

    def whole_fuzz_phase(self, factory: str, examples: int) -> bool:
        """Whether the phase ran every example of its budget on the factory's role (not cut at its time bound)."""
        return any(line.startswith(f"fuzz {ROLE[factory]}: {examples} examples") and "cut at" not in line
                   for line in self.fuzz_lines)


def rows_in(results: pathlib.Path) -> list[dict]:
    return [json.loads(line) for path in results.glob("*.jsonl") for line in path.read_text().splitlines()]


def check(classpath: str, factory: str, results: pathlib.Path, *, fuzz_examples: int | None = None,
          timeout_s: float = 600) -> CheckRun:
    """`rstck check jvm:FACTORY` with its fuzz phase (`fuzz_examples` per role, else the command's default)."""
    command = [RSTCK, "check", f"jvm:{factory}", "--classpath", classpath, "--results", str(results)]
    command += ["--fuzz-examples", str(fuzz_examples)] if fuzz_examples else []
    run = subprocess.run(command, capture_output=True, text=True, timeout=timeout_s)
    rows = rows_in(results)
    output = run.stdout + run.stderr
    assert rows, f"rstck check wrote no results:\n{output[-4000:]}"
    fuzzed = {row["violated"] or row["rule"]: row["verdict"] for row in rows if str(row["check"]).startswith("fuzz-")}
    return CheckRun(items={item: found.verdict for item, found in item_verdicts(rows).items()},
                    fuzz_findings=fuzzed, fuzz_lines=re.findall(r"^fuzz \w+: .*$", run.stdout, re.MULTILINE),
                    output=output)


def fuzz(classpath: str, factory: str, results: pathlib.Path, *, seed: int, examples: int,
         timeout_s: float = 900) -> tuple[dict[str, str], str]:
    """`rstck fuzz jvm:FACTORY` from `seed` (its runs of 50 examples use seed, seed + 1, ...): each violated item's
    verdict, and what it printed."""
    command = [RSTCK, "fuzz", f"jvm:{factory}", "--classpath", classpath, "--seed", str(seed), "--examples",
               str(examples), "--profile", "rstck-ci", "--database", "none", "--results", str(results)]
    run = subprocess.run(command, capture_output=True, text=True, timeout=timeout_s, cwd=results.parent)
    output = run.stdout + run.stderr
    assert run.returncode in (0, 1), output[-4000:]
    assert re.search(r"^rstck fuzz: [\d,]+ examples", output, re.MULTILINE), output[-4000:]  # it ran to its end
    return {row["violated"] or row["rule"]: row["verdict"] for row in rows_in(results)}, output


BUSY_PROCESSES = 2  # one per core of the machines the suite runs on


@contextlib.contextmanager
def both_cores_busy() -> Iterator[None]:
    """Two processes that spin for as long as the block runs (each stopped by its own pid afterwards)."""
    spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(BUSY_PROCESSES)]
    try:
        yield
    finally:
        for spinner in spinners:
            spinner.kill()
            spinner.wait(10)
