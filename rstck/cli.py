"""The `rstck` command: check a target, list the catalogue."""

from __future__ import annotations

import argparse
import json
import pathlib
import re
import sys
import textwrap
import threading
import time

from .plan import Planned, plan, untested_items, unserved
from .rules import all_checks
from .rules.catalog import load_catalog
from .runner import Result, run_check
from .settle import DEFAULT_DEADLINE_S
from .target import load_target
from .verdict import BadInput, Verdict

EXIT_CONFORMANT, EXIT_NONCONFORMANT, EXIT_BAD_INPUT = 0, 1, 2

# Which verdict speaks for a rule with several checks.
_SEVERITY = [Verdict.FAIL, Verdict.ERROR, Verdict.WARN, Verdict.UNSUPPORTED, Verdict.PASS,
             Verdict.NOT_APPLICABLE, Verdict.UNTESTED]


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        return args.run(args)
    except BadInput as exc:
        print(f"rstck: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except BrokenPipeError:  # `rstck rules | head`: the reader has seen enough
        sys.stderr.close()
        return EXIT_CONFORMANT


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="rstck", description="Conformance checks for Reactive Streams.")
    commands = parser.add_subparsers(required=True, metavar="COMMAND")

    check = commands.add_parser("check", help="run every check the target can serve")
    check.add_argument("target", metavar="MODULE:ATTR", help="the target, e.g. mypkg.tck:target")
    check.add_argument("--rules", help='rule ids or globs, comma-separated: "1.*,3.9"')
    check.add_argument("--results", metavar="DIR", help="write one JSON Lines row per check into DIR")
    check.add_argument("--timeout", type=float, default=DEFAULT_DEADLINE_S, metavar="S",
                       help=f"deadline per check in seconds (default {DEFAULT_DEADLINE_S:g})")
    check.add_argument("--list", action="store_true", help="show what would run, run nothing")
    check.add_argument("--no-fuzz", action="store_true", help="skip the short fuzz phase after the checks")
    check.add_argument("--fuzz-examples", type=int, default=None, metavar="N",
                       help="examples per role in the fuzz phase (default 100)")
    check.set_defaults(run=_check)

    rules = commands.add_parser("rules", help="list the catalogue and what covers each item")
    rules.add_argument("--rules", help="rule ids or globs, comma-separated")
    rules.set_defaults(run=_rules)

    from .fuzz.cli import add_fuzz_command  # `rstck fuzz` lives with the fuzzer (rstck/fuzz/cli.py)
    add_fuzz_command(commands)
    return parser


def _check(args: argparse.Namespace) -> int:
    if args.timeout <= 0:
        raise BadInput(f"--timeout must be positive, got {args.timeout:g}")
    if args.fuzz_examples is not None and args.fuzz_examples < 1:
        raise BadInput(f"--fuzz-examples must be at least 1, got {args.fuzz_examples}")
    target = load_target(args.target)
    planned = plan(target, rules=args.rules)
    skipped = unserved(target, rules=args.rules)
    if not planned:
        offered = ", ".join(sorted(target.capabilities & {"publisher", "subscriber", "processor"})) or "nothing"
        raise BadInput(f"no check to run: the selection {args.rules or 'all'} has none for what the target "
                       f"offers ({offered})")
    if args.list:
        for p in planned:
            item = load_catalog()[p.check.rule]
            print(f"{p.check.rule:<8} {item.level:<11} {p.check.role:<12} {p.check.name}")
        print(f"{len(planned)} checks would run against {target.name}")
        return EXIT_CONFORMANT
    results = _run_with_progress(planned, args.timeout)
    fuzz_lines: list[str] = []
    if not args.no_fuzz and not args.rules:  # a selection of rules asks for those checks only
        from .fuzz.phase import DEFAULT_EXAMPLES, run_phase  # Hypothesis is imported only when it runs

        rows, summaries = run_phase(target, args.target, examples=args.fuzz_examples or DEFAULT_EXAMPLES,
                                    timeout_s=args.timeout)
        results += rows
        fuzz_lines = [f"fuzz {s.role}: {s.examples} examples ({s.steps} steps) in {s.duration_s:.1f} s, "
                      f"{s.findings or 'no'} finding{'s' * (s.findings != 1)}" for s in summaries]
    if args.results:
        _write_results(pathlib.Path(args.results), target.name, results)
    items = _print_table(results, args.rules)
    for line in fuzz_lines:
        print(line)
    return _summarise(results, items, skipped)


class _Progress:
    """On a terminal: the check being run and its elapsed time, refreshed while it runs. Otherwise a
    mark per check (. pass, F fail, E error, W warn, s anything else)."""

    def __init__(self, total: int):
        self.total = total
        self.tty = sys.stderr.isatty()
        self._line = ""
        self._started = 0.0
        self._stop = threading.Event()
        self._lock = threading.Lock()
        if self.tty:
            threading.Thread(target=self._tick, name="rstck-progress", daemon=True).start()

    def begin(self, number: int, planned: Planned) -> None:
        with self._lock:
            self._line = f"[{number}/{self.total}] {planned.check.rule} {planned.check.name}"
            if planned.view:
                self._line += f" ({planned.view})"
            self._started = time.monotonic()
        self._show()

    def end(self, result: Result) -> None:
        if not self.tty:
            print(_progress_mark(result.verdict), end="", file=sys.stderr, flush=True)

    def close(self) -> None:
        self._stop.set()
        print("\r\x1b[K" if self.tty else "", file=sys.stderr, flush=True)

    def _tick(self) -> None:
        while not self._stop.wait(0.2):
            self._show()

    def _show(self) -> None:
        if not self.tty:
            return
        with self._lock:
            text = f"{self._line}  {time.monotonic() - self._started:.1f} s" if self._line else ""
        print(f"\r\x1b[K{text}", end="", file=sys.stderr, flush=True)


def _run_with_progress(planned: list[Planned], timeout_s: float) -> list[Result]:
    results = []
    progress = _Progress(len(planned))
    try:
        for number, p in enumerate(planned, 1):
            progress.begin(number, p)
            result = run_check(p.check, p.target, timeout_s=timeout_s)
            results.append(result)
            progress.end(result)
    finally:
        progress.close()
    return results


def _progress_mark(verdict: Verdict) -> str:
    return {Verdict.PASS: ".", Verdict.FAIL: "F", Verdict.ERROR: "E", Verdict.WARN: "W"}.get(verdict, "s")


def _write_results(directory: pathlib.Path, target_name: str, results: list[Result]) -> None:
    try:
        directory.mkdir(parents=True, exist_ok=True)
        path = directory / f"check-{re.sub(r'[^A-Za-z0-9_.-]+', '_', target_name)}.jsonl"
        with path.open("w", encoding="utf-8") as out:
            for result in results:
                out.write(json.dumps(result.row(), ensure_ascii=False) + "\n")
    except OSError as exc:
        raise BadInput(f"--results {directory}: cannot write ({exc.strerror})") from exc


def item_verdicts(results: list[Result], rules: str | None = None) -> dict[str, tuple[str, str]]:
    """Each item's verdict and one-line reason, in catalogue order.

    A finding counts for the item it is charged to (a 1.1 violation seen by a 3.9 check is 1.1's). An item
    whose checks passed but one of which was stopped by another item's finding is `blocked`: that check
    could not decide it. An item with no check of its own run, but charged by another, shows that charge.
    """
    charged: dict[str, list[Result]] = {}
    blocked: dict[str, list[Result]] = {}
    for result in results:
        if not result.rule:  # an error of the fuzz phase: not an item's
            continue
        item_id = result.violated or result.rule
        charged.setdefault(item_id, []).append(result)
        if item_id != result.rule:
            blocked.setdefault(result.rule, []).append(result)
    catalog = load_catalog()
    sections = {catalog[r.rule].section for r in results if r.rule}
    untested = {item.id: reason for item, reason in untested_items(rules) if item.section in sections}
    verdicts: dict[str, tuple[str, str]] = {}
    first_error: dict[str, str] = {}
    for item in catalog.items:
        rows, stopped = charged.get(item.id, []), blocked.get(item.id, [])
        if rows or stopped or item.id in untested:
            verdict, reason = _item_verdict(rows, stopped, untested.get(item.id))
            if verdict == Verdict.ERROR.value:  # the same error in many items: told once
                seen = first_error.setdefault(re.sub(r"\d+", "N", reason.split(": ", 1)[-1]), item.id)
                reason = reason if seen == item.id else f"the same error as {seen}"
            verdicts[item.id] = (verdict, reason)
    return verdicts


def _print_table(results: list[Result], rules: str | None) -> dict[str, tuple[str, str]]:
    verdicts = item_verdicts(results, rules)
    catalog = load_catalog()
    width = max((len(item_id) for item_id in verdicts), default=4)
    print(f"{'rule':<{width}}  {'level':<11}  {'verdict':<11}  reason")
    for item_id, (verdict, reason) in verdicts.items():
        print(f"{item_id:<{width}}  {catalog[item_id].level:<11}  {verdict:<11}  {textwrap.shorten(reason, 100)}")
    _print_evidence(results)
    return verdicts


def _print_evidence(results: list[Result]) -> None:
    """One block per distinct failure, error or warning (its first occurrence, in full), and how many
    more checks found the same."""
    groups: dict[tuple[str, str, str], list[Result]] = {}
    for result in results:
        if result.verdict in (Verdict.FAIL, Verdict.ERROR, Verdict.WARN):
            groups.setdefault(_same_finding(result), []).append(result)
    for rows in groups.values():
        first = rows[0]
        print(f"\n--- {first.verdict.value}: {first.rule or first.check} {first.check}\n{first.message}")
        if len(rows) > 1:
            others = ", ".join(f"{r.rule} {r.check}" for r in rows[1:4]) + (", …" if len(rows) > 4 else "")
            what = "error" if first.verdict is Verdict.ERROR else "finding"
            print(f"  (the same {what} in {len(rows) - 1} more check{'s' * (len(rows) > 2)}: {others})")


def _same_finding(result: Result) -> tuple[str, str, str]:
    """What makes two rows the same finding: the item charged and the reason, numbers aside (trace
    positions, element counts, the n a factory was asked for)."""
    reason = re.sub(r"\d+", "N", result.reason)
    if result.verdict is Verdict.ERROR:  # one broken factory breaks every check that uses it
        return (result.verdict.value, "", reason)
    return (result.verdict.value, result.violated or result.rule, reason)


def _item_verdict(rows: list[Result], stopped: list[Result], untested: str | None) -> tuple[str, str]:
    if not rows and stopped:
        first = stopped[0]
        return "blocked", f"{first.check} was stopped by a {first.violated} {first.verdict.value}"
    if not rows:
        return Verdict.UNTESTED.value, untested or ""
    worst = min(rows, key=lambda r: _SEVERITY.index(r.verdict))
    if worst.verdict is not Verdict.PASS:
        return worst.verdict.value, f"{worst.check}: {worst.reason}" if len(rows) > 1 else worst.reason
    passed = sum(r.verdict is Verdict.PASS for r in rows)
    reason = f"{passed} of {len(rows) + len(stopped)} checks passed" if len(rows) + len(stopped) > 1 else ""
    others = [r for r in rows if r.verdict is not Verdict.PASS]
    if others:
        reason += f"; {others[0].check}: {others[0].reason}"
    if stopped:
        first = stopped[0]
        return "blocked", f"{reason}; {first.check} was stopped by a {first.violated} {first.verdict.value}"
    return Verdict.PASS.value, reason


def _summarise(results: list[Result], items: dict[str, tuple[str, str]], skipped: dict[str, int]) -> int:
    must_failed = any(r.verdict is Verdict.FAIL for r in results)
    errors = any(r.verdict is Verdict.ERROR for r in results)
    if skipped:
        print("\nnot run (n/a): " + ", ".join(f"{count} {subject} checks (the target offers no {subject})"
                                              for subject, count in skipped.items()))
    order = ["pass", "fail", "error", "blocked", "warn", "unsupported", "n/a", "untested"]
    counts = {v: sum(verdict == v for verdict, _ in items.values()) for v in order}
    shown = ", ".join(f"{counts[v]} {v}" for v in order if counts[v])
    if must_failed:
        status, code = "NOT CONFORMANT (a MUST item failed)", EXIT_NONCONFORMANT
    elif errors:
        status, code = "INCOMPLETE (checks could not run)", EXIT_BAD_INPUT
    else:
        status, code = "conformant", EXIT_CONFORMANT
    checks = sum(1 for r in results if not r.check.startswith("fuzz-"))
    print(f"\nrstck: {checks} check{'s' * (checks != 1)}, {len(items)} item{'s' * (len(items) != 1)}: {shown} "
          f"— {status}")
    return code


def _rules(args: argparse.Namespace) -> int:
    checks = all_checks()
    untested = dict((item.id, reason) for item, reason in untested_items())
    for item in load_catalog().select(args.rules):
        covering = [c.name for c in checks if c.rule == item.id]
        coverage = ", ".join(covering) if covering else f"untested: {untested.get(item.id, 'no check yet')}"
        print(f"{item.id}  {item.level}  [{item.spec} / {item.section}]")
        print(textwrap.indent(textwrap.fill(item.text, 96), "    "))
        print(textwrap.indent(textwrap.fill(f"covered by: {coverage}", 96), "    "))
    return EXIT_CONFORMANT


if __name__ == "__main__":
    sys.exit(main())
