"""The `rstck` command: one module per subcommand (check, rules, report, fuzz, serve), each adding its parser
and the function that runs it; here only what they share: the parser and how the command ends."""

from __future__ import annotations

import argparse
import importlib
import sys

import rstck
from rstck.cli.exits import EXIT_BAD_INPUT, EXIT_CONFORMANT
from rstck.core.signals import escape_controls
from rstck.core.process_end import end_process
from rstck.core.verdict import BadInput
from rstck.execution.worker import KitBroke


def main(argv: list[str] | None = None) -> int:
    args = build_parser(sys.argv[1:] if argv is None else argv).parse_args(argv)
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


# Each subcommand's module, in the order `rstck --help` lists them. `fuzz` imports Hypothesis only when it runs,
# `serve` the reference server (docs/wire-format.md).
COMMANDS = ("check", "rules", "report", "fuzz", "serve")


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The parser of `rstck`; given the command line `argv`, only its command's (a run loads no other command's
    module: benchmarks/startup.py), else every command's."""
    parser = argparse.ArgumentParser(prog="rstck", description="Conformance checks for Reactive Streams.")
    parser.add_argument("--version", action="version", version=f"rstck {rstck.__version__}")
    commands = parser.add_subparsers(required=True, metavar="COMMAND")
    named = next((word for word in argv or () if not word.startswith("-")), None)
    for command in [named] if named in COMMANDS else COMMANDS:
        getattr(importlib.import_module(f"rstck.cli.{command}"), f"add_{command}_command")(commands)
    return parser
