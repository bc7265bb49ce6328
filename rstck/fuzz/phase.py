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

# The bounds that keep a conformant target's run to a few seconds (the default number of examples is the
# command's: rstck.cli.check.DEFAULT_FUZZ_EXAMPLES). The first run of each role is whole whatever the time
# bound, so that what it finds is found on a loaded machine as on a quiet one; each of its examples is bounded
# by the check deadline.
EXAMPLES_PER_RUN = 50
STEPS = 20
TIME_PER_ROLE_S = 5.0
SHRINK_TIME_S = 10.0


@dataclasses.dataclass
class PhaseSummary:
    role: str
    examples: int
    steps: int
    duration_s: float
    findings: int


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
                      timeout_s=timeout_s, time_s=TIME_PER_ROLE_S, sure_runs=1, shrink_time_s=SHRINK_TIME_S)
        outcome = run_shard_on(target, shard, progress=progress)
        merged = merge(outcome.findings)
        for finding, _count in merged:
            rows.append(result_row(finding, target_name=target.name, replay=replay_command(shard, finding),
                                   duration_s=outcome.duration_s, loaded_as=shard.target))
        summaries.append(PhaseSummary(role, outcome.examples, outcome.steps, outcome.duration_s, len(merged)))
    return rows, summaries
