"""`rstck report`: result rows of any runs merged into one HTML report (and JUnit XML), and the writing of
those reports, which `rstck check` shares."""

from __future__ import annotations

import argparse
import pathlib
import sys
from typing import Any

from rstck.cli.exits import EXIT_CONFORMANT
from rstck.core.signals import escape_controls
from rstck.core.verdict import BadInput
from rstck.execution.rows import read_rows
from rstck.reports.allowlist import apply_allowlist, load_allowlist


def add_report_command(commands: Any) -> None:
    report = commands.add_parser("report", help="merge result rows of any runs into one HTML report")
    report.add_argument("results", nargs="+", metavar="RESULTS", help="JSON Lines files, or directories of them")
    report.add_argument("-o", "--output", default="rstck-report/index.html", metavar="FILE",
                        help="where to write the report (default rstck-report/index.html)")
    report.add_argument("--allow", metavar="FILE", help="apply an allowlist of known deviations to the rows")
    report.add_argument("--junit", metavar="FILE", help="also write the merged rows as JUnit XML")
    report.add_argument("--strict", action="store_true",
                        help="a SHOULD item not met (warn) is a failed item in the report and the JUnit XML, as "
                             "`rstck check --strict` counts it")
    report.add_argument("--engine", choices=("local", "spark"), default="local",
                        help="spark: read JSON Lines and Parquet with Spark SQL and add the pass rate over time per "
                             "item and implementation (see the rstck documentation, page 'Spark' (docs/spark.md))")
    report.add_argument("--spark-master", metavar="URL", help="with --engine spark: the master (default local[*])")
    report.add_argument("--history", action="store_true",
                        help="each RESULTS is one run, oldest first: draw each implementation's pass rate per run "
                             "(the page shows the merged, newest rows as always)")
    report.set_defaults(run=run_report_command)


def run_report_command(args: argparse.Namespace) -> int:
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
    write_reports(rows, html=args.output, junit=args.junit, notes=notes, sources=loaded.sources, suite="rstck",
                  said=f" ({len(rows)} rows, {implementations} implementation{'s' * (implementations != 1)})",
                  history=history, strict=args.strict)
    return EXIT_CONFORMANT


def write_reports(rows: list[dict[str, Any]], *, html: str | None, junit: str | None, notes: list[str], suite: str,
                  sources: list[str] = (), said: str = "", history: Any = None,
                  verdicts: dict[str, Any] | None = None, strict: bool = False) -> None:
    """The HTML report and JUnit XML, when asked for (imported only then: start-up counts); with `history`
    (--engine spark), the pass rates in the page and every day of them in pass-rate.csv beside it; with
    `verdicts`, the item verdicts of each implementation as the caller judged them, so that both count the items
    the table counts; `strict`: a warn is a failed item in both."""
    if html:
        from rstck.reports.html import write_report

        written = write_report(rows, html, notes=notes, sources=sources, history=history, verdicts=verdicts,
                               strict=strict)
        print(f"report: {written}{said}")
        if hasattr(history, "write_csv"):  # the Spark engine's pass rates: every day of them beside the page
            days = len(history.days)
            print(f"pass rate over time: {history.write_csv(pathlib.Path(html).parent / 'pass-rate.csv')} "
                  f"({len(history.counts)} item-day cells; {days} day{'s' * (days != 1)} in the page)")
    if junit:
        from rstck.reports.junit import write_junit

        write_junit(rows, junit, suite=suite, verdicts=verdicts, strict=strict)
