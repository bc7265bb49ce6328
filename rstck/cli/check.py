"""`rstck check`: every check the target can serve, in a supervised worker process, then the table of item
verdicts, the evidence, the reports asked for and the gate's word.

Each row is judged by the allowlist as it arrives and written to the results file then, once; the item
verdicts are computed once, for the table, the summary and the HTML report alike.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import textwrap
import time
from collections.abc import Callable
from typing import Any

from rstck.cli.exits import EXIT_CONFORMANT, EXIT_INTERRUPTED, EXIT_NONCONFORMANT
from rstck.execution.options import count, seconds
from rstck.cli.report import write_reports
from rstck.core.catalog import ALL_PROFILE, DEFAULT_PROFILE, load_catalog
from rstck.core.plugins import TargetOption, adapters, target_options
from rstck.core.settle import DEFAULT_DEADLINE_S
from rstck.core.signals import escape_controls
from rstck.core.verdict import BadInput, Verdict
from rstck.execution.results import ResultsFile
from rstck.execution.rows import is_fuzz_row
from rstck.execution.supervise import CheckRun, Observer, supervise
from rstck.reports.allowlist import Allowlist, load_allowlist
from rstck.reports.rerun import REPRO_DIRECTORY, launcher, shell_words, target_arguments
from rstck.reports.items import (SUMMARY_ORDER, ItemVerdict, confirmed_findings, failed_items, gate_status,
                                 item_verdicts)

MAX_FUZZ_EXAMPLES = 1_000_000
MAX_STREAM_LENGTH = 1_000_000_000
DEFAULT_FUZZ_EXAMPLES = 100  # per role, in the fuzz phase (rstck/fuzz/phase.py)


def add_check_command(commands: Any) -> None:
    check = commands.add_parser("check", help="run every check the target can serve")
    check.add_argument("target", metavar="TARGET", nargs="?",
                       help="the target: " + "; ".join(a.describes for a in adapters() if a.describes))
    for option in target_options():  # what the installed adapters add (rstck/core/plugins.py)
        check.add_argument(option.flag, metavar=option.metavar, help=option.help, dest=_dest(option))
    check.add_argument("--rules", help='rule ids or globs, comma-separated, ! excludes: "1.*,3.9", "*,!2.12"')
    check.add_argument("--profile", default=DEFAULT_PROFILE, metavar="NAME",
                       help="which checks run: default (every catalogue not opt-in), an opt-in profile "
                            "(spi-draft: the early SPI draft; see the rstck documentation, page 'The SPI draft' "
                            "(docs/spi-draft.md)), or all")
    check.add_argument("--results", metavar="DIR", help="write one JSON Lines row per check into DIR")
    check.add_argument("--html", metavar="FILE", help="write the HTML report of this run to FILE")
    check.add_argument("--junit", metavar="FILE", help="write JUnit XML of this run to FILE")
    check.add_argument("--repro", metavar="DIR",
                       help="write a standalone reproducer script per failing finding into DIR (see the rstck "
                            "documentation, page 'Reproducers' (docs/reproducers.md))")
    check.add_argument("--allow", metavar="FILE",
                       help="an allowlist of known deviations (TOML; see the rstck documentation, page 'Reports' "
                            "(docs/reports.md)): their failures are "
                            "`allowed` until the entry expires")
    check.add_argument("--strict", action="store_true",
                       help="a SHOULD item not met (warn) is a failed item, as a MUST item failed is: in the summary, "
                            "the gate (exit 1), the JUnit XML and the HTML report")
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
    check.set_defaults(run=run_check_command)


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


def run_check_command(args: argparse.Namespace) -> int:
    _target(args)
    seconds("--timeout", args.timeout)
    count("--fuzz-examples", args.fuzz_examples, minimum=1, maximum=MAX_FUZZ_EXAMPLES)
    if args.stream_length:  # 0: the stress mode is off
        count("--stream-length", args.stream_length, minimum=1, maximum=MAX_STREAM_LENGTH)
    load_catalog().select(args.rules, args.profile)  # an unknown profile or rule id is bad input before anything starts
    allowlist = Allowlist(load_allowlist(args.allow) if args.allow else [], names={args.target})
    # The fuzzers exercise the core rules: a run of an opt-in profile alone has no fuzz phase.
    core = args.profile in (DEFAULT_PROFILE, ALL_PROFILE)
    fuzz = 0 if args.no_fuzz or args.rules or not core else (args.fuzz_examples or DEFAULT_FUZZ_EXAMPLES)
    run = CheckRun(args.target, args.rules, args.timeout, fuzz, stream_length=args.stream_length, list_only=args.list,
                   profile=args.profile)
    observer = _CheckObserver(allowlist, args.results, listing=args.list)
    outcome = supervise(run, observer, in_process=args.in_process, fuzz_phase=run_fuzz_phase)
    args.finalize = args.in_process  # only then did this process hold the target (rstck.core.process_end)
    if args.list:
        for info in outcome.checks:
            print(f"{info['rule']:<8} {info['level']:<11} {info['role']:<12} {info['check']}")
        print(f"{len(outcome.checks)} checks would run against {escape_controls(outcome.target)}")
        return EXIT_CONFORMANT
    rows = observer.rows
    allowlist.names.add(outcome.target)
    selected = {item.id for item in load_catalog().select(args.rules, args.profile)} if args.rules else None
    allowance = allowlist.allowance(rows, selected=selected)
    verdicts = item_verdicts(rows, args.rules, untested_by_spec=outcome.untested)
    _print_table(verdicts)
    _print_evidence(rows, lambda found: _next_steps(args, found) if _failed(found[0], args.strict) else [])
    for summary in outcome.fuzz:
        findings = summary["findings"]
        print(f"fuzz {summary['role']}: {summary['examples']} examples ({summary['steps']} steps) in "
              f"{summary['duration_s']:.1f} s, {findings or 'no'} finding{'s' * (findings != 1)}"
              + _confirmations(rows, summary["role"], findings)
              + (f" (cut at its {summary['ceiling_s']:.0f} s bound: {summary['planned']} were planned)"
                 if summary["ceiling_s"] is not None else ""))
    notes = list(outcome.notes) + allowance.messages()
    for note in notes:
        print(f"note: {escape_controls(note)}")
    if args.repro:  # after the table: the rows then carry their scripts into the results and the report
        from rstck.reports.repro import attach_reproducers, summary

        made = attach_reproducers(rows, args.repro)
        print("\n" + "\n".join(escape_controls(line) for line in summary(made, args.repro)))
        observer.rewrite(rows)
    write_reports(rows, html=args.html, junit=args.junit, notes=notes, suite=f"rstck {outcome.target}",
                  verdicts={outcome.target: verdicts}, strict=args.strict)
    if outcome.interrupted:
        print(f"\nrstck: interrupted after {len(rows)} of {len(outcome.checks)} checks; "
              f"{'the rows so far are in ' + args.results if args.results else 'nothing was written'}")
        return EXIT_INTERRUPTED
    return _summarise(rows, verdicts, outcome.skipped, planned=len(outcome.checks), expired=len(allowance.expired),
                      strict=args.strict)


class _CheckObserver(Observer):
    """Each row as it arrives: judged by the allowlist, kept, and written to the results file; and progress on
    stderr (on a terminal: the check being run and its elapsed time; otherwise a mark per check: . pass,
    F fail, E error, W warn, s anything else)."""

    def __init__(self, allowlist: Allowlist, results: str | None, *, listing: bool = False):
        self.tty = sys.stderr.isatty() and not listing
        self.marks = not sys.stderr.isatty() and not listing
        self.rows: list[dict[str, Any]] = []
        self._allowlist = allowlist
        self._results_directory = results
        self._results: ResultsFile | None = None
        self._line = ""
        self._started = 0.0
        self._marked = False

    def begin(self, number: int, total: int, info: dict[str, Any]) -> None:
        self._line = f"[{number}/{total}] {info['rule']} {info['check']}" + (f" ({info['view']})" if info["view"]
                                                                            else "")
        self._started = time.monotonic()
        self.tick()

    def tick(self) -> None:
        if self.tty and self._line:
            text = escape_controls(f"{self._line}  {time.monotonic() - self._started:.1f} s")
            print(f"\r\x1b[K{text}", end="", file=sys.stderr, flush=True)

    def row(self, row: dict[str, Any]) -> None:
        row = self._allowlist.judge(row)
        self.rows.append(row)
        if self.marks and not is_fuzz_row(row):
            print(_progress_mark(row["verdict"]), end="", file=sys.stderr, flush=True)
            self._marked = True
        if self._results_directory is not None:
            if self._results is None:
                self._results = ResultsFile(self._results_directory, "check", row["implementation"])
            self._results.write(row)

    def rewrite(self, rows: list[dict[str, Any]]) -> None:
        """The results file again, with the rows as they stand at the end (each with its reproducer)."""
        if self._results is not None:
            self._results = ResultsFile(self._results_directory, "check", rows[0]["implementation"])
            for row in rows:
                self._results.write(row)
            self._results.close()

    def close(self) -> None:
        if self.tty and self._line:
            print("\r\x1b[K", end="", file=sys.stderr, flush=True)
        elif self._marked:
            print(file=sys.stderr, flush=True)
        if self._results is not None:
            self._results.close()


def run_fuzz_phase(target: Any, target_spec: str, *, examples: int, timeout_s: float,
                   progress: Callable[[str, Any], None]) -> tuple[list[Any], list[Any]]:
    """The fuzz phase after the checks (rstck/fuzz/phase.py), run in the check worker; Hypothesis is imported
    only when it runs."""
    from rstck.fuzz.phase import run_phase

    return run_phase(target, target_spec, examples=examples, timeout_s=timeout_s, progress=progress)


def _progress_mark(verdict: str) -> str:
    return {Verdict.PASS.value: ".", Verdict.FAIL.value: "F", Verdict.ERROR.value: "E",
            Verdict.WARN.value: "W"}.get(verdict, "s")


def _print_table(verdicts: dict[str, ItemVerdict]) -> None:
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


def _print_evidence(rows: list[dict[str, Any]], next_steps: Callable[[list[dict[str, Any]]], list[str]]) -> None:
    """One block per distinct failure, error, warning or allowed failure (its first occurrence, in full),
    how many more checks found the same, and the lines `next_steps` gives for it (a failed item's commands)."""
    groups: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    confirmed = confirmed_findings(rows)  # a fuzz finding that repeats a check's is told under the check's
    for row in rows:
        if row["verdict"] in ("fail", "error", "warn", "allowed"):
            groups.setdefault(_same_finding(confirmed.get(id(row), row)), []).append(row)
    for found in groups.values():
        first = found[0]
        allowed = first["deviation"] or {}
        why = f" (allowed by {allowed.get('entry')} until {allowed.get('expires')})" if allowed else ""
        message = first["message"]
        if _failed(first, strict=True) and first["replay"]:  # the re-run line below says the same
            message = message.removesuffix(f"\n  replay: {first['replay']}")
        print(f"\n--- {first['verdict']}{why}: {first['rule'] or first['check']} {first['check']}\n"
              f"{escape_controls(message)}")
        same = [row for row in found[1:] if id(row) not in confirmed]
        if same:
            others = ", ".join(f"{r['rule']} {r['check']}" for r in same[:3]) + (", …" if len(same) > 3 else "")
            what = "error" if first["verdict"] == "error" else "finding"
            print(f"  (the same {what} in {len(same)} more check{'s' * (len(same) > 1)}: {others})")
        for row in found[1:]:
            if id(row) in confirmed:
                print(f"  (fuzzing the {row['role']} found it too: {escape_controls(row['replay'])})")
        for line in next_steps(found):
            print(f"  {escape_controls(line)}")


def _confirmations(rows: list[dict[str, Any]], role: str, findings: int) -> str:
    """What the fuzz phase's line adds for its findings that confirmed a check's (rstck/reports/items.py)."""
    confirmed = confirmed_findings(rows)
    items = sorted({row["violated"] or row["rule"] for row in rows
                    if id(row) in confirmed and row["check"] == f"fuzz-{role}"})
    if not items:
        return ""
    who = "it" if findings == 1 else str(len(items))
    return f" ({who} confirmed the checks' finding{'s' * (len(items) > 1)} of {', '.join(items)})"


def _failed(row: dict[str, Any], strict: bool) -> bool:
    """Whether the row is a failed item's finding: a fail, and under --strict a warn (rstck/reports/items.py)."""
    return row["verdict"] == Verdict.FAIL.value or (strict and row["verdict"] == Verdict.WARN.value)


def _next_steps(args: argparse.Namespace, found: list[dict[str, Any]]) -> list[str]:
    """The two commands under a failed item, to run from where this one ran: the one that runs it again (a check's
    item alone, with --rules; a fuzz finding's replay) and the one that writes its reproducer (docs/reproducers.md),
    or why none can be written."""
    first = found[0]
    target = target_arguments(args.target)
    command = f"{launcher('rstck')} check {shell_words(target + _rerun_options(args, given=target))}"
    directory = shell_words([args.repro or REPRO_DIRECTORY])
    if is_fuzz_row(first):  # the fuzz phase runs only without --rules, from the same seeds
        rerun = first["replay"]
        if args.fuzz_examples:
            command += f" --fuzz-examples {args.fuzz_examples}"
    else:  # the item's own check, if one of its own found it; else the check of the other item that did
        item = first["violated"] or first["rule"]
        rule = item if any(row["rule"] == item for row in found) else first["rule"]
        command = rerun = f"{command} --rules {shell_words([rule])}"
    from rstck.reports.repro import reason_against  # only when an item failed

    reasons = [reason_against(row) for row in found]
    if args.repro:  # this run writes the reproducers: the summary names each script
        return [f"re-run:           {rerun}"]
    return [f"re-run:           {rerun}",
            f"write reproducer: {command} --repro {directory}" if "" in reasons else
            f"no reproducer: {reasons[0]}"]


def _rerun_options(args: argparse.Namespace, given: list[str]) -> list[str]:
    """The options of this run that change what a check sees, repeated in the commands printed under a failed
    item; an adapter's option its target's arguments (`given`) name already is not said twice."""
    words = ["--profile", args.profile] if args.profile != DEFAULT_PROFILE else []
    if args.timeout != DEFAULT_DEADLINE_S:
        words += ["--timeout", f"{args.timeout:g}"]
    if args.stream_length:
        words += ["--stream-length", str(args.stream_length)]
    if args.strict:
        words.append("--strict")
    for option in target_options():  # an adapter's value for the worker that loads the target (--spark-master)
        value = getattr(args, _dest(option))
        if option.env and value and option.flag not in given:
            words += [option.flag, value]
    return words


def _same_finding(row: dict[str, Any]) -> tuple[str, str, str]:
    """What makes two rows the same finding: the item charged and the reason, numbers aside (trace
    positions, element counts, the n a factory was asked for)."""
    reason = re.sub(r"\d+", "N", row["reason"])
    if row["verdict"] == "error":  # one broken factory breaks every check that uses it
        return (row["verdict"], "", reason)
    return (row["verdict"], row["violated"] or row["rule"], reason)


def _summarise(rows: list[dict[str, Any]], verdicts: dict[str, ItemVerdict], skipped: dict[str, int], *,
               planned: int, expired: int = 0, strict: bool = False) -> int:
    if skipped:
        print("\nnot run (n/a): " + ", ".join(f"{count} {subject} checks (the target offers no {subject})"
                                              for subject, count in skipped.items()))
    counts = {v: sum(found.verdict == v for found in verdicts.values()) for v in SUMMARY_ORDER}
    shown = ", ".join(f"{counts[v]} {v}" for v in SUMMARY_ORDER if counts[v])
    if strict and counts[Verdict.WARN.value]:  # the number every face reports: rstck/reports/items.py is_failure
        shown += f" ({len(failed_items(verdicts, strict=True))} failed under --strict)"
    status, code = gate_status(rows, strict=strict)
    if expired and code != EXIT_NONCONFORMANT:
        status, code = f"NOT CONFORMANT ({expired} allowlist entr{'ies' if expired > 1 else 'y'} expired)", \
            EXIT_NONCONFORMANT
    print(f"\nrstck: {planned} check{'s' * (planned != 1)}, {len(verdicts)} item{'s' * (len(verdicts) != 1)}: "
          f"{shown} — {status}")
    return code
