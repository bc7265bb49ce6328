"""The `rstck` command: check a target, list the catalogue."""

from __future__ import annotations

import argparse
import json
import pathlib
import re
import sys
import textwrap

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
    if args.results:
        _write_results(pathlib.Path(args.results), target.name, results)
    _print_table(results, args.rules)
    return _summarise(results, skipped)


def _run_with_progress(planned: list[Planned], timeout_s: float) -> list[Result]:
    results = []
    tty = sys.stderr.isatty()
    for number, p in enumerate(planned, 1):
        if tty:
            print(f"\r\x1b[K[{number}/{len(planned)}] {p.check.rule} {p.check.name}", end="", file=sys.stderr,
                  flush=True)
        result = run_check(p.check, p.target, timeout_s=timeout_s)
        results.append(result)
        if not tty:
            print(_progress_mark(result.verdict), end="", file=sys.stderr, flush=True)
    print("\r\x1b[K" if tty else "", file=sys.stderr)
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


def _print_table(results: list[Result], rules: str | None) -> None:
    """One row per item. A check's finding counts for the item it charged (a 1.1 violation seen by a
    3.9 check is 1.1's), and an item whose checks were all stopped that way shows `blocked`."""
    charged: dict[str, list[Result]] = {}
    blocked: dict[str, list[Result]] = {}
    for result in results:
        item_id = result.violated or result.rule
        charged.setdefault(item_id, []).append(result)
        if item_id != result.rule:
            blocked.setdefault(result.rule, []).append(result)
    catalog = load_catalog()
    sections = {catalog[r.rule].section for r in results}
    untested = {item.id: reason for item, reason in untested_items(rules) if item.section in sections}
    shown = [item for item in catalog.items if item.id in charged or item.id in blocked or item.id in untested]
    width = max((len(item.id) for item in shown), default=4)
    print(f"{'rule':<{width}}  {'level':<11}  {'verdict':<11}  reason")
    for item in shown:
        verdict, reason = _item_verdict(charged.get(item.id, []), blocked.get(item.id, []), untested.get(item.id))
        print(f"{item.id:<{width}}  {item.level:<11}  {verdict:<11}  {textwrap.shorten(reason, 100)}")
    _print_evidence(results)


def _print_evidence(results: list[Result]) -> None:
    """The full message of the first failing check per charged item (errors: every one)."""
    seen: dict[str, int] = {}
    for result in results:
        if result.verdict not in (Verdict.FAIL, Verdict.ERROR, Verdict.WARN):
            continue
        key = result.check if result.verdict is Verdict.ERROR else result.violated or result.rule
        seen[key] = seen.get(key, 0) + 1
        if seen[key] == 1:
            print(f"\n--- {result.verdict.value}: {result.rule} {result.check}\n{result.message}")
    repeats = sum(count - 1 for count in seen.values())
    if repeats:
        print(f"\n({repeats} more checks found the same violations; --results keeps every one)")


def _item_verdict(rows: list[Result], stopped: list[Result], untested: str | None) -> tuple[str, str]:
    if not rows and stopped:
        first = stopped[0]
        return "blocked", f"{first.check} was stopped by a {first.violated} {first.verdict.value}"
    if not rows:
        return Verdict.UNTESTED.value, untested or ""
    worst = min(rows, key=lambda r: _SEVERITY.index(r.verdict))
    if worst.verdict is not Verdict.PASS:
        return worst.verdict.value, f"{worst.check}: {worst.reason}" if len(rows) > 1 else worst.reason
    others = [r for r in rows if r.verdict is not Verdict.PASS] + stopped
    total = len(rows) + len(stopped)
    reason = f"{len(rows) - len(others) + len(stopped)} of {total} checks passed" if total > 1 else ""
    if others:
        first = others[0]
        reason += (f"; {first.check} was stopped by a {first.violated} {first.verdict.value}"
                   if first in stopped else f"; {first.check}: {first.reason}")
    return Verdict.PASS.value, reason


def _summarise(results: list[Result], skipped: dict[str, int]) -> int:
    counts = {v: sum(r.verdict is v for r in results) for v in Verdict}
    must_failed = counts[Verdict.FAIL]
    errors = counts[Verdict.ERROR]
    if skipped:
        print("\nnot run (n/a): " + ", ".join(f"{count} {subject} checks (the target offers no {subject})"
                                              for subject, count in skipped.items()))
    order = [Verdict.PASS, Verdict.FAIL, Verdict.ERROR, Verdict.WARN, Verdict.UNSUPPORTED, Verdict.NOT_APPLICABLE,
             Verdict.UNTESTED]
    shown = ", ".join(f"{counts[v]} {v.value}" for v in order if counts[v])
    if must_failed:
        status, code = "NOT CONFORMANT (a MUST item failed)", EXIT_NONCONFORMANT
    elif errors:
        status, code = "INCOMPLETE (checks could not run)", EXIT_BAD_INPUT
    else:
        status, code = "conformant", EXIT_CONFORMANT
    rules = len({r.rule for r in results})
    print(f"\nrstck: {len(results)} checks of {rules} items: {shown} — {status}")
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
