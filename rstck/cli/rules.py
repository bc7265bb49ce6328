"""`rstck rules`: the catalogue, item by item, with what covers each."""

from __future__ import annotations

import argparse
import textwrap
from typing import Any

from rstck.cli.exits import EXIT_CONFORMANT
from rstck.core.catalog import DEFAULT_PROFILE, load_catalog
from rstck.core.checks import all_checks
from rstck.execution.plan import untested_items


def add_rules_command(commands: Any) -> None:
    rules = commands.add_parser("rules", help="list the catalogue and what covers each item")
    rules.add_argument("--rules", help="rule ids or globs, comma-separated")
    rules.add_argument("--profile", default=None, metavar="NAME",
                       help="only this profile's items: default, an opt-in profile (spi-draft) or all (the default)")
    rules.set_defaults(run=run_rules_command)


def run_rules_command(args: argparse.Namespace) -> int:
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
