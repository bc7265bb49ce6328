"""The threading-style matrix as a figure: how many of its combinations hold, and how many broken ones are caught.

    python benchmarks/style_matrix.py [--sample] [--jobs N] [--only conformant|broken] [--role ROLE]
                                      [--fuzz-examples N]

Runs `rstck check tests.styles.targets:NAME` as a user runs it, a process per target with the fuzz phase, against
every allowed combination of tests/styles/ (or `--sample`: the seeded samples `make test` checks), then against
every broken one (each allowed style with each defect that applies to it). Prints how many combinations hold (no
fail, warn or error; no reproducer written), how many broken ones are caught on their item, the ones that are not
with the items they got, and the time taken. Exits 1 when a combination does not hold or a broken one is missed.
See docs/testing.md, "The threading-style matrix".
"""

from __future__ import annotations

import argparse
import concurrent.futures
import pathlib
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))

from tests.styles.choices import DEFECTS, ROLES, Style, allowed_styles, broken_styles  # noqa: E402
from tests.styles.running import FUZZ_EXAMPLES, CheckRun, rstck_check  # noqa: E402


def holds(run: CheckRun) -> bool:
    return not run.offending() and run.returncode == 0 and not run.reproducers


def caught(run: CheckRun) -> bool:
    return run.caught(DEFECTS[run.style.defect])


def run_all(styles: list[Style], jobs: int, **options) -> tuple[list[CheckRun], float]:
    started = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        runs = list(pool.map(lambda style: rstck_check(style, **options), styles))
    return runs, time.monotonic() - started


def report(title: str, runs: list[CheckRun], seconds: float, good, verb: str) -> bool:
    bad = [run for run in runs if not good(run)]
    print(f"{title}: {len(runs) - len(bad)} of {len(runs)} {verb}, in {seconds:.0f} s "
          f"(a run takes {min(r.seconds for r in runs):.1f}-{max(r.seconds for r in runs):.1f} s)" if runs else
          f"{title}: none")
    for run in bad:
        items = sorted({f"{r['rule']} {r['verdict']}" for r in run.rows if r["verdict"] in ("fail", "warn", "error")})
        print(f"  {run.style.name}: exit {run.returncode}; {', '.join(items) or 'nothing failed'}")
    return not bad


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sample", action="store_true", help="only the seeded samples make test checks")
    parser.add_argument("--jobs", type=int, default=2, help="rstck check processes at once (default 2)")
    parser.add_argument("--only", choices=("conformant", "broken"), help="one half of the figure")
    parser.add_argument("--role", choices=ROLES, help="only the styles of one role")
    parser.add_argument("--fuzz-examples", type=int, default=FUZZ_EXAMPLES,
                        help=f"examples per role in each run's fuzz phase (default {FUZZ_EXAMPLES})")
    args = parser.parse_args()
    if args.sample:
        from tests.styles.test_broken_matrix import BROKEN_SAMPLE
        from tests.styles.test_matrix import SAMPLE

        conformant, broken = list(SAMPLE), list(BROKEN_SAMPLE)
    else:
        conformant, broken = allowed_styles(), broken_styles()
    if args.role:
        conformant = [s for s in conformant if s.role == args.role]
        broken = [s for s in broken if s.role == args.role]
    ok = True
    if args.only != "broken":
        runs, seconds = run_all(conformant, args.jobs, fuzz_examples=args.fuzz_examples)
        ok &= report("conformant combinations", runs, seconds, holds, "hold (no fail, warn or error)")
    if args.only != "conformant":
        runs, seconds = run_all(broken, args.jobs, repro=False, fuzz_examples=args.fuzz_examples)
        ok &= report("broken combinations", runs, seconds, caught, "caught on their item")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
