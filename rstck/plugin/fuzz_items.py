"""Fuzz items for pytest: one per role a configured target offers, marked `fuzz`.

Every target the plugin collects (`--rstck-target`, or a Verification subclass) also gets
`fuzz-publisher` / `fuzz-subscriber` / `fuzz-processor` items, marked `fuzz`, the role, and
`rstck(spec=..., role=...)`, so `pytest -m fuzz` and `pytest -m "not fuzz"` split a run. A
rule selection (`--rstck-rules`, `Verification.rules`) narrows a run to checks: no fuzz items.

The budget is the rstck-ci profile's unless $RSTCK_FUZZ_PROFILE names another; seeds start at
0, so an item does the same each run (the example database under <rootdir>/.rstck/hypothesis
adds only replays of failures found before). `RSTCK_FUZZ_REPLAY=SEED[:BLOB] pytest NODEID`
replays one case.
"""

from __future__ import annotations

import math
import os
import re
import warnings
from typing import Any

import pytest

from rstck.core.target import Target
from rstck.core.verdict import Verdict
from rstck.fuzz.budgets import DEFAULT_DATABASE, PROFILES, ROLES, choose_profile
from rstck.fuzz.campaign import Shard, ShardOutcome, run_shard_on
from rstck.fuzz.local_engine import run_local
from rstck.fuzz.report import merge, result_row, spec_fuzzed_as
from rstck.plugin.check_items import RUNNER, RstckNote, RstckWarning
from rstck.plugin.counting import same_worker
from rstck.plugin.options import in_process, judged, timeout_of
from rstck.plugin.reporting import SeenAgain, record_rows
from rstck.plugin.rerun import runnable_command

REPLAY_ENV = "RSTCK_FUZZ_REPLAY"
_TOKEN = re.compile(r"^(\d+)(?::([A-Za-z0-9+/=]+))?$")


def fuzz_items(collector: pytest.Collector, target: Target, subjects: frozenset[str] | None, *,
               rules: str | None = None) -> list[pytest.Item]:
    """The fuzz items of `target` for the roles it offers among `subjects` (none for a target whose fuzzing is
    only on request, as a network server's: see Target.fuzz_phase)."""
    if rules or not target.fuzz_phase:
        return []
    return [FuzzItem.from_parent(collector, name=f"fuzz-{role}", target=target, role=role)
            for role in ROLES if role in target.capabilities and (subjects is None or role in subjects)]


class FuzzFailed(AssertionError):
    """A fuzz item found violations; the message holds each one's rule, trace and replay command."""


class FuzzError(Exception):
    """The fuzz item could not run to the end (a factory raised, a worker broke)."""


class FuzzItem(pytest.Item):
    def __init__(self, *, target: Target, role: str, **kwargs: Any):
        super().__init__(**kwargs)
        self.target = target
        self.role = role
        self.outcome: ShardOutcome | None = None
        self.messages: list[tuple[str, str, str]] = []  # verdict, rule, message of each finding
        self.add_marker(pytest.mark.fuzz)
        self.add_marker(getattr(pytest.mark, role))
        self.add_marker(same_worker(self.parent.nodeid))
        self.add_marker(pytest.mark.rstck(spec=spec_fuzzed_as(role), role=role))
        self.user_properties.append(("rstck_fuzz_role", role))

    def _shard(self) -> tuple[Shard, str | None]:
        profile = choose_profile(ci_default=True)
        budget = PROFILES[profile]
        timeout = timeout_of(self.config, getattr(self.parent, "verification", None))
        common = dict(target=self.target.name, role=self.role, examples_per_run=budget.examples_per_run,
                      steps=budget.steps, profile=profile, timeout_s=timeout, shrink_time_s=budget.shrink_time_s)
        replay = os.environ.get(REPLAY_ENV)
        if replay:
            match = _TOKEN.match(replay)
            if not match:
                raise pytest.UsageError(f"${REPLAY_ENV}={replay!r}: write it as SEED or SEED:BLOB")
            return Shard(first_seed=int(match.group(1)), runs=1, **common), match.group(2)
        database = str(self.config.rootpath / DEFAULT_DATABASE)
        runs = math.ceil(budget.examples / budget.examples_per_run)
        return Shard(first_seed=0, runs=runs, examples=budget.examples, database=database, replay_saved=True,
                     **common), None

    def setup(self) -> None:
        shard, blob = self._shard()
        if in_process(self.config):
            self.outcome = outcome = run_shard_on(self.target, shard, blob=blob)
        else:  # a target that ends the process costs this item an error naming the call, not the pytest run
            # Forked with the flight recorder on (one shard: its first death is its error), as the checks are.
            [outcome] = run_local([shard], jobs=1, method="fork", target=self.target, blob=blob, recorded=True)
            self.outcome = outcome
        rows = []
        for finding, _count in merge(outcome.findings):
            replay = f"{REPLAY_ENV}={finding.replay} {runnable_command(self)}"
            result = result_row(finding, target_name=self.target.name, replay=replay, duration_s=outcome.duration_s,
                                node_id=self.nodeid, loaded_as=self.target.loaded_as)
            row = judged(self.config, result.row())
            if row["verdict"] == Verdict.ALLOWED.value:  # as `rstck check --allow` judges a fuzz row
                warnings.warn(RstckNote(f"fuzzing the {self.role} found {finding.rule}, allowed until "
                                        f"{row['deviation']['expires']} by {row['deviation']['entry']}"))
            else:
                self.messages.append((row["verdict"], finding.rule, result.message))
            rows.append(row)
        record_rows(self, rows)
        self.user_properties.append(("rstck_fuzz_examples", outcome.examples))
        if self.messages and all(verdict == Verdict.ERROR.value for verdict, _, _ in self.messages):
            raise FuzzError("\n\n".join(text for _, _, text in self.messages))

    def runtest(self) -> None:
        """Fails for the failed items no item of the same target reported before it in this process (a fail; under
        --rstck-strict a warn too), and reports them: each is counted once (rstck/plugin/counting.py). A warn
        that is no failure warns, as a check item's does."""
        runner, scope = self.config.stash[RUNNER], self.parent.nodeid
        violations, first_seen, found_too = [], [], []
        for verdict, rule, text in self.messages:
            if not runner.findings.fails(verdict):  # an error failed setup already
                if verdict == Verdict.WARN.value:
                    warnings.warn(RstckWarning(text))
                continue
            reporter = runner.findings.reported(scope, rule)
            if reporter is None:
                violations.append(text)
                first_seen.append(rule)
            else:  # told once, in the summary (rstck/plugin/reporting.py)
                found_too.append([rule, reporter])
        runner.findings.record(scope, first_seen, self.nodeid)
        self.seen_again = SeenAgain(reported=first_seen, found_too=found_too)
        if violations:
            raise FuzzFailed("\n\n".join(violations))

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, (FuzzFailed, FuzzError)):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style)

    def reportinfo(self):
        return self.path, None, f"fuzz {self.role}"
