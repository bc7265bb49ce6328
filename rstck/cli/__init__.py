"""The `rstck` command: check a target, list the catalogue."""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import re
import sys
import textwrap
import time

from rstck.execution.options import count, seconds
from rstck.execution.plan import untested_items
from rstck.reports.allowlist import apply_allowlist, load_allowlist
from rstck.reports.items import SUMMARY_ORDER, gate_status, item_verdicts
from rstck.execution.rows import read_rows, upgrade
from rstck.core.checks import all_checks
from rstck.core.catalog import ALL_PROFILE, DEFAULT_PROFILE, load_catalog
from rstck.core.plugins import TargetOption, adapters, target_options
from rstck.core.settle import DEFAULT_DEADLINE_S
from rstck.core.signals import escape_controls
from rstck.core.process_end import end_process
from rstck.execution.supervise import CheckRun, KitBroke, Observer, supervise
from rstck.core.verdict import BadInput, Verdict

EXIT_CONFORMANT, EXIT_NONCONFORMANT, EXIT_BAD_INPUT = 0, 1, 2
EXIT_INTERRUPTED = 130  # the user's Ctrl-C, as a shell reports it
MAX_FUZZ_EXAMPLES = 1_000_000
MAX_STREAM_LENGTH = 1_000_000_000
DEFAULT_FUZZ_EXAMPLES = 100  # per role, in the fuzz phase (rstck/fuzz/phase.py)


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        code = args.run(args)
        if argv is None:  # the command, not a test calling main(): threads a target left must not keep it alive
            end_process(code, lambda text: print(text, file=sys.stderr))
        return code
    except BadInput as exc:
        print(f"rstck: {escape_controls(str(exc))}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KitBroke as exc:
        print(f"rstck: the kit broke (a defect of rstck, not of the target):\n{escape_controls(str(exc))}",
              file=sys.stderr)
        return EXIT_BAD_INPUT
    except BrokenPipeError:  # `rstck rules | head`: the reader has seen enough
        sys.stderr.close()
        return EXIT_CONFORMANT


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="rstck", description="Conformance checks for Reactive Streams.")
    commands = parser.add_subparsers(required=True, metavar="COMMAND")

    check = commands.add_parser("check", help="run every check the target can serve")
    check.add_argument("target", metavar="TARGET", nargs="?",
                       help="the target: " + "; ".join(a.describes for a in adapters() if a.describes))
    for option in target_options():  # what the installed adapters add (rstck/core/plugins.py)
        check.add_argument(option.flag, metavar=option.metavar, help=option.help, dest=_dest(option))
    check.add_argument("--rules", help='rule ids or globs, comma-separated, ! excludes: "1.*,3.9", "*,!2.12"')
    check.add_argument("--profile", default=DEFAULT_PROFILE, metavar="NAME",
                       help="which checks run: default (every catalogue not opt-in), an opt-in profile "
                            "(spi-draft: the early SPI draft, docs/spi-draft.md), or all")
    check.add_argument("--results", metavar="DIR", help="write one JSON Lines row per check into DIR")
    check.add_argument("--html", metavar="FILE", help="write the HTML report of this run to FILE")
    check.add_argument("--junit", metavar="FILE", help="write JUnit XML of this run to FILE")
    check.add_argument("--allow", metavar="FILE",
                       help="an allowlist of known deviations (TOML; see docs/reports.md): their failures are "
                            "`allowed` until the entry expires")
    check.add_argument("--timeout", type=float, default=DEFAULT_DEADLINE_S, metavar="S",
                       help=f"deadline per check in seconds (default {DEFAULT_DEADLINE_S:g})")
    check.add_argument("--list", action="store_true", help="show what would run, run nothing")
    check.add_argument("--no-fuzz", action="store_true", help="skip the short fuzz phase after the checks")
    check.add_argument("--fuzz-examples", type=int, default=None, metavar="N",
                       help=f"examples per role in the fuzz phase (default {DEFAULT_FUZZ_EXAMPLES})")
    check.add_argument("--stream-length", type=int, default=0, metavar="N",
                       help="the stress mode: the checks that stream (1.1, 3.8, 3.17) deliver N elements")
    check.add_argument("--in-process", action="store_true",
                       help="run the checks in this process, not a supervised worker (for a debugger); a target "
                            "that ends the process then ends the run")
    check.set_defaults(run=_check)

    rules = commands.add_parser("rules", help="list the catalogue and what covers each item")
    rules.add_argument("--rules", help="rule ids or globs, comma-separated")
    rules.add_argument("--profile", default=None, metavar="NAME",
                       help="only this profile's items: default, an opt-in profile (spi-draft) or all (the default)")
    rules.set_defaults(run=_rules)

    report = commands.add_parser("report", help="merge result rows of any runs into one HTML report")
    report.add_argument("results", nargs="+", metavar="RESULTS", help="JSON Lines files, or directories of them")
    report.add_argument("-o", "--output", default="rstck-report/index.html", metavar="FILE",
                        help="where to write the report (default rstck-report/index.html)")
    report.add_argument("--allow", metavar="FILE", help="apply an allowlist of known deviations to the rows")
    report.add_argument("--junit", metavar="FILE", help="also write the merged rows as JUnit XML")
    report.add_argument("--engine", choices=("local", "spark"), default="local",
                        help="spark: read JSON Lines and Parquet with Spark SQL and add the pass rate over time per "
                             "item and implementation (docs/spark.md)")
    report.add_argument("--spark-master", metavar="URL", help="with --engine spark: the master (default local[*])")
    report.add_argument("--history", action="store_true",
                        help="each RESULTS is one run, oldest first: draw each implementation's pass rate per run "
                             "(the page shows the merged, newest rows as always)")
    report.set_defaults(run=_report)

    from rstck.cli.fuzz import add_fuzz_command  # `rstck fuzz` lives with the fuzzer (rstck/cli/fuzz.py)
    add_fuzz_command(commands)
    from rstck.cli.serve import add_serve_command  # `rstck serve`: the reference server (docs/wire-format.md)
    add_serve_command(commands)
    return parser


def _dest(option: TargetOption) -> str:
    return "target_option_" + option.flag.lstrip("-").replace("-", "_")


def _target(args: argparse.Namespace) -> None:
    """The target string, from the TARGET argument or an adapter's option that names one (--client CMD); the
    options that hand a value to the target through the environment set it for the worker that loads it."""
    naming = [(option, getattr(args, _dest(option))) for option in target_options() if option.prefix]
    given = [(option, value) for option, value in naming if value is not None]
    flags = " or ".join(f"{option.flag} {option.metavar}" for option, _ in naming)
    named = "a target (" + ", ".join(a.describes for a in adapters() if a.describes) + ")"
    if (args.target is None) == (not given) or len(given) > 1:
        raise BadInput(f"rstck check: name {named}" + (f" or {flags}, not both" if given else
                                                       (f", or {flags}" if flags else "")))
    if given:
        option, value = given[0]
        if not value.strip():
            raise BadInput(f"{option.flag}: {option.metavar} is empty")
        args.target = option.prefix + value
    for option in target_options():
        value = getattr(args, _dest(option))
        if option.env and value:  # the worker process, where the target is loaded, inherits it
            os.environ[option.env] = value


def _check(args: argparse.Namespace) -> int:
    _target(args)
    seconds("--timeout", args.timeout)
    count("--fuzz-examples", args.fuzz_examples, minimum=1, maximum=MAX_FUZZ_EXAMPLES)
    if args.stream_length:  # 0: the stress mode is off
        count("--stream-length", args.stream_length, minimum=1, maximum=MAX_STREAM_LENGTH)
    load_catalog().select(args.rules, args.profile)  # an unknown profile or rule id is bad input before anything starts
    deviations = load_allowlist(args.allow) if args.allow else []
    # The fuzzers exercise the core rules: a run of an opt-in profile alone has no fuzz phase.
    core = args.profile in (DEFAULT_PROFILE, ALL_PROFILE)
    fuzz = 0 if args.no_fuzz or args.rules or not core else (args.fuzz_examples or DEFAULT_FUZZ_EXAMPLES)
    run = CheckRun(args.target, args.rules, args.timeout, fuzz, stream_length=args.stream_length, list_only=args.list,
                   profile=args.profile)
    observer = _CheckObserver(pathlib.Path(args.results) if args.results else None, listing=args.list)
    outcome = supervise(run, observer, in_process=args.in_process)
    if args.list:
        for info in outcome.checks:
            print(f"{info['rule']:<8} {info['level']:<11} {info['role']:<12} {info['check']}")
        print(f"{len(outcome.checks)} checks would run against {escape_controls(outcome.target)}")
        return EXIT_CONFORMANT
    rows = [upgrade(row) for row in outcome.rows]
    selected = {item.id for item in load_catalog().select(args.rules, args.profile)} if args.rules else None
    allowance = apply_allowlist(rows, deviations, names={args.target, outcome.target}, selected=selected)
    rows = allowance.rows
    if deviations:
        observer.rewrite(rows)  # the rows as judged: `rstck report` shows them allowed too
    items = _print_table(rows, args.rules)
    for summary in outcome.fuzz:
        findings = summary["findings"]
        print(f"fuzz {summary['role']}: {summary['examples']} examples ({summary['steps']} steps) in "
              f"{summary['duration_s']:.1f} s, {findings or 'no'} finding{'s' * (findings != 1)}")
    notes = list(outcome.notes) + allowance.messages()
    for note in notes:
        print(f"note: {escape_controls(note)}")
    _write_reports(rows, html=args.html, junit=args.junit, notes=notes, suite=f"rstck {outcome.target}")
    if outcome.interrupted:
        print(f"\nrstck: interrupted after {len(rows)} of {len(outcome.checks)} checks; "
              f"{'the rows so far are in ' + args.results if args.results else 'nothing was written'}")
        return EXIT_INTERRUPTED
    return _summarise(rows, items, outcome.skipped, planned=len(outcome.checks), expired=len(allowance.expired))


def _report(args: argparse.Namespace) -> int:
    history = None
    if args.engine == "spark":
        from rstck.reports.spark import aggregate  # pyspark loads only here

        loaded, history = aggregate(args.results, master=args.spark_master)
    else:
        if args.spark_master:
            raise BadInput("--spark-master goes with --engine spark")
        loaded = read_rows(args.results)
        if args.history:
            from rstck.reports.pictures import run_history

            history = run_history(args.results)
    rows, notes = loaded.rows, list(loaded.notes)
    if args.allow:
        allowance = apply_allowlist(rows, load_allowlist(args.allow))
        rows, notes = allowance.rows, notes + allowance.messages()
    for note in notes:
        print(f"note: {escape_controls(note)}", file=sys.stderr)
    implementations = len({row["implementation"] for row in rows})
    _write_reports(rows, html=args.output, junit=args.junit, notes=notes, sources=loaded.sources, suite="rstck",
                   said=f" ({len(rows)} rows, {implementations} implementation{'s' * (implementations != 1)})",
                   history=history)
    return EXIT_CONFORMANT


def _write_reports(rows: list[dict], *, html: str | None, junit: str | None, notes: list[str], suite: str,
                   sources: list[str] = (), said: str = "", history=None) -> None:
    """The HTML report and JUnit XML, when asked for (imported only then: start-up counts); with `history`
    (--engine spark), the pass rates in the page and every day of them in pass-rate.csv beside it."""
    if html:
        from rstck.reports.html import write_report

        print(f"report: {write_report(rows, html, notes=notes, sources=sources, history=history)}{said}")
        if hasattr(history, "write_csv"):  # the Spark engine's pass rates: every day of them beside the page
            days = len(history.days)
            print(f"pass rate over time: {history.write_csv(pathlib.Path(html).parent / 'pass-rate.csv')} "
                  f"({len(history.counts)} item-day cells; {days} day{'s' * (days != 1)} in the page)")
    if junit:
        from rstck.reports.junit import write_junit

        write_junit(rows, junit, suite=suite)


class _CheckObserver(Observer):
    """Progress on stderr (on a terminal: the check being run and its elapsed time; otherwise a mark per
    check: . pass, F fail, E error, W warn, s anything else), and each row written as it arrives."""

    def __init__(self, results: pathlib.Path | None, *, listing: bool = False):
        self.tty = sys.stderr.isatty() and not listing
        self.marks = not sys.stderr.isatty() and not listing
        self._line = ""
        self._started = 0.0
        self._results = results
        self._out = None
        self._marked = False

    def begin(self, number: int, total: int, info: dict) -> None:
        self._line = f"[{number}/{total}] {info['rule']} {info['check']}" + (f" ({info['view']})" if info["view"]
                                                                            else "")
        self._started = time.monotonic()
        self.tick()

    def tick(self) -> None:
        if self.tty and self._line:
            text = escape_controls(f"{self._line}  {time.monotonic() - self._started:.1f} s")
            print(f"\r\x1b[K{text}", end="", file=sys.stderr, flush=True)

    def row(self, row: dict) -> None:
        if self.marks and not row["check"].startswith("fuzz-"):
            print(_progress_mark(Verdict(row["verdict"])), end="", file=sys.stderr, flush=True)
            self._marked = True
        if self._results is not None:
            if self._out is None:
                self._out = _open_results(self._results, row["target"])
            self._out.write(json.dumps(row, ensure_ascii=False) + "\n")
            self._out.flush()  # a row is kept even if the run is cut short

    def rewrite(self, rows: list[dict]) -> None:
        """Replace the rows written as they came by the rows as judged at the end."""
        if self._out is not None:
            with open(self._out.name, "w", encoding="utf-8") as out:
                out.writelines(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)

    def close(self) -> None:
        if self.tty and self._line:
            print("\r\x1b[K", end="", file=sys.stderr, flush=True)
        elif self._marked:
            print(file=sys.stderr, flush=True)
        if self._out is not None:
            self._out.close()


def _progress_mark(verdict: Verdict) -> str:
    return {Verdict.PASS: ".", Verdict.FAIL: "F", Verdict.ERROR: "E", Verdict.WARN: "W"}.get(verdict, "s")


def _open_results(directory: pathlib.Path, target_name: str):
    try:
        directory.mkdir(parents=True, exist_ok=True)
        path = directory / f"check-{re.sub(r'[^A-Za-z0-9_.-]+', '_', target_name)}.jsonl"
        return path.open("w", encoding="utf-8")
    except OSError as exc:
        raise BadInput(f"--results {directory}: cannot write ({exc.strerror})") from exc


def _print_table(rows: list[dict], rules: str | None) -> dict[str, str]:
    verdicts = item_verdicts(rows, rules)
    catalog = load_catalog()
    width = max((len(item_id) for item_id in verdicts), default=4)
    print(f"{'rule':<{width}}  {'level':<11}  {'verdict':<11}  reason")
    profile = DEFAULT_PROFILE
    for item_id, found in verdicts.items():
        if item_id in catalog and catalog.profile_of(catalog[item_id]) != profile:  # an opt-in profile's items
            profile = catalog.profile_of(catalog[item_id])
            print(f"-- profile {profile} ({'opt-in' if profile in catalog.opt_in else 'default'})")
        print(f"{item_id:<{width}}  {catalog[item_id].level:<11}  {found.verdict:<11}  "
              f"{escape_controls(textwrap.shorten(found.reason, 100))}")
    _print_evidence(rows)
    return {item_id: found.verdict for item_id, found in verdicts.items()}


def _print_evidence(rows: list[dict]) -> None:
    """One block per distinct failure, error, warning or allowed failure (its first occurrence, in full),
    and how many more checks found the same."""
    groups: dict[tuple[str, str, str], list[dict]] = {}
    for row in rows:
        if row["verdict"] in ("fail", "error", "warn", "allowed"):
            groups.setdefault(_same_finding(row), []).append(row)
    for found in groups.values():
        first = found[0]
        allowed = first["deviation"] or {}
        why = f" (allowed by {allowed.get('entry')} until {allowed.get('expires')})" if allowed else ""
        print(f"\n--- {first['verdict']}{why}: {first['rule'] or first['check']} {first['check']}\n"
              f"{escape_controls(first['message'])}")
        if len(found) > 1:
            others = ", ".join(f"{r['rule']} {r['check']}" for r in found[1:4]) + (", …" if len(found) > 4 else "")
            what = "error" if first["verdict"] == "error" else "finding"
            print(f"  (the same {what} in {len(found) - 1} more check{'s' * (len(found) > 2)}: {others})")


def _same_finding(row: dict) -> tuple[str, str, str]:
    """What makes two rows the same finding: the item charged and the reason, numbers aside (trace
    positions, element counts, the n a factory was asked for)."""
    reason = re.sub(r"\d+", "N", row["reason"])
    if row["verdict"] == "error":  # one broken factory breaks every check that uses it
        return (row["verdict"], "", reason)
    return (row["verdict"], row["violated"] or row["rule"], reason)


def _summarise(rows: list[dict], items: dict[str, str], skipped: dict[str, int], *, planned: int,
               expired: int = 0) -> int:
    if skipped:
        print("\nnot run (n/a): " + ", ".join(f"{count} {subject} checks (the target offers no {subject})"
                                              for subject, count in skipped.items()))
    counts = {v: sum(verdict == v for verdict in items.values()) for v in SUMMARY_ORDER}
    shown = ", ".join(f"{counts[v]} {v}" for v in SUMMARY_ORDER if counts[v])
    status, code = gate_status(rows)
    if expired and code != EXIT_NONCONFORMANT:
        status, code = f"NOT CONFORMANT ({expired} allowlist entr{'ies' if expired > 1 else 'y'} expired)", \
            EXIT_NONCONFORMANT
    print(f"\nrstck: {planned} check{'s' * (planned != 1)}, {len(items)} item{'s' * (len(items) != 1)}: {shown} "
          f"— {status}")
    return code


def _rules(args: argparse.Namespace) -> int:
    checks = all_checks()
    untested = dict((item.id, reason) for item, reason in untested_items())
    catalog = load_catalog()
    for item in catalog.select(args.rules, args.profile):
        covering = [c.name for c in checks if c.rule == item.id]
        coverage = ", ".join(covering) if covering else f"untested: {untested.get(item.id, 'no check yet')}"
        profile = catalog.profile_of(item)
        opt_in = f"  (profile {profile}, opt-in)" if profile != DEFAULT_PROFILE else ""
        print(f"{item.id}  {item.level}  [{item.spec} / {item.section}]{opt_in}")
        print(textwrap.indent(textwrap.fill(item.text, 96), "    "))
        if item.final_spec:
            print(textwrap.indent(textwrap.fill(f"final spec: {item.final_spec}", 96), "    "))
        print(textwrap.indent(textwrap.fill(f"covered by: {coverage}", 96), "    "))
    return EXIT_CONFORMANT


if __name__ == "__main__":
    sys.exit(main())
