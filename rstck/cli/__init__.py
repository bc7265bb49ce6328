"""The `rstck` command: one module per subcommand (check, rules, report, fuzz, serve), each adding its parser
and the function that runs it; here only what they share: the parser and how the command ends."""

from __future__ import annotations

import argparse
import sys

from rstck.cli.check import add_check_command
from rstck.cli.exits import EXIT_BAD_INPUT, EXIT_CONFORMANT
from rstck.cli.fuzz import add_fuzz_command
from rstck.cli.report import add_report_command
from rstck.cli.rules import add_rules_command
from rstck.cli.serve import add_serve_command
from rstck.core.signals import escape_controls
from rstck.core.process_end import end_process
from rstck.core.verdict import BadInput
from rstck.execution.worker import KitBroke


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        code = args.run(args)
        if argv is None:  # the command, not a test calling main(): threads a target left must not keep it alive
            end_process(code, lambda text: print(text, file=sys.stderr), finalize=getattr(args, "finalize", True))
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


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="rstck", description="Conformance checks for Reactive Streams.")
    commands = parser.add_subparsers(required=True, metavar="COMMAND")
    add_check_command(commands)
    add_rules_command(commands)
    add_report_command(commands)
    add_fuzz_command(commands)  # Hypothesis is imported only when it runs
    add_serve_command(commands)  # the reference server (docs/wire-format.md), imported only when it runs
    return parser
