"""The short fuzz phase of `rstck check`: after the rule checks, a small deterministic campaign per
role the target offers, so that the verdict of `rstck check` is as strong as what the kit knows how
to find. Its findings become result rows charged to their items, each with the command that replays it.
"""

from __future__ import annotations

import dataclasses
import math

from rstck.core.target import Target
from rstck.execution.findings import Result
from rstck.fuzz.budgets import ROLES
from rstck.fuzz.campaign import Progress, Shard, replay_command, run_shard_on
from rstck.fuzz.report import merge, result_row

# The budget is a number of examples (the command's: rstck.cli.check.DEFAULT_FUZZ_EXAMPLES), run whole on a
# loaded machine as on a quiet one, so that the phase finds the same everywhere; which examples a seed draws
# depends on how many its run asks for, so a run cut short would miss what a whole one finds. The ceiling is
# only a bound, so that every run ends whatever the target does (each example is also bounded by the check
# deadline); a role that reaches it says so in its summary.
EXAMPLES_PER_RUN = 50
STEPS = 20
CEILING_PER_ROLE_S = 120.0
SHRINK_TIME_S = 10.0


@dataclasses.dataclass
class PhaseSummary:
    role: str
    examples: int
    steps: int
    duration_s: float
    findings: int
    planned: int  # the examples the budget asked for
    ceiling_s: float | None  # set when the role reached the ceiling before its budget ran out


def run_phase(target: Target, target_spec: str, *, examples: int, timeout_s: float,
              progress: Progress | None = None) -> tuple[list[Result], list[PhaseSummary]]:
    """Fuzz every role `target` offers from seed 0; the findings as result rows, and what ran. `progress` hears
    from the runs as they go (the supervised worker's heartbeat)."""
    rows: list[Result] = []
    summaries: list[PhaseSummary] = []
    per_run = min(EXAMPLES_PER_RUN, examples)
    for role in (r for r in ROLES if r in target.capabilities):
        shard = Shard(target=target_spec, role=role, first_seed=0, runs=math.ceil(examples / per_run),
                      examples_per_run=per_run, examples=examples, steps=STEPS, profile="rstck-ci",
                      timeout_s=timeout_s, time_s=CEILING_PER_ROLE_S, shrink_time_s=SHRINK_TIME_S)
        outcome = run_shard_on(target, shard, progress=progress)
        merged = merge(outcome.findings)
        for finding, _count in merged:
            rows.append(result_row(finding, target_name=target.name, replay=replay_command(shard, finding),
                                   duration_s=outcome.duration_s, loaded_as=shard.target))
        summaries.append(PhaseSummary(role, outcome.examples, outcome.steps, outcome.duration_s, len(merged),
                                      examples, CEILING_PER_ROLE_S if outcome.out_of_time else None))
    return rows, summaries
