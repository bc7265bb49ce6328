"""Hypothesis settings for fuzz runs: the rstck profiles, the phases of a run, the example database.

Each budget of budgets.py is registered as a Hypothesis settings profile of the same name, so
that `hypothesis.settings.get_profile("rstck-deep")` shows what a nightly run uses. Profiles
are looked up, never loaded: loading one would change the settings of the user's own
Hypothesis tests in the same process.
"""

from __future__ import annotations

import os
import pathlib
import re
from collections.abc import Iterable

from hypothesis import HealthCheck, Phase, Verbosity, settings
from hypothesis.database import DirectoryBasedExampleDatabase, ExampleDatabase

from rstck.fuzz.budgets import PROFILES

# A run is up to three Hypothesis runs: generating stops at the first failing example; shrinking
# resumes from it (saved in the run's database) under its own bounds; if a bound cut shrinking
# short, replaying the smallest failing example it saved yields the failure and its blob.
# Hypothesis' explain phase is never run: it re-runs a failing example many times to annotate
# which arguments matter, and a fuzz finding is read as a trace.
GENERATING = (Phase.explicit, Phase.reuse, Phase.generate, Phase.target)
SHRINKING = (Phase.reuse, Phase.shrink)
REPLAYING = (Phase.reuse,)
ONE_RUN = (*GENERATING, Phase.shrink)

for _name, _budget in PROFILES.items():
    settings.register_profile(_name, max_examples=_budget.examples_per_run, stateful_step_count=_budget.steps,
                              deadline=None, database=None, print_blob=True, report_multiple_bugs=True,
                              phases=ONE_RUN, suppress_health_check=list(HealthCheck), verbosity=Verbosity.quiet)


def run_settings(profile: str, *, examples: int, steps: int, database: ExampleDatabase | None,
                 phases: tuple[Phase, ...] = ONE_RUN) -> settings:
    """Settings of one Hypothesis run. `deadline=None`: the kit's own watchdog bounds each step,
    and turns a step that never returns into a violation instead of a Hypothesis error."""
    return settings(settings.get_profile(profile), max_examples=examples, stateful_step_count=steps,
                    database=database, deadline=None, phases=phases)


def example_database(directory: str | os.PathLike | None, target_name: str, role: str, *,
                     replay_saved: bool) -> ExampleDatabase | None:
    """The database of one target and role, under `directory`; None when databases are off.

    Every run of a campaign saves what it finds, but only the runs asked to replay saved
    failures read them: otherwise each of a campaign's hundred runs would spend itself
    re-finding one known failure instead of exploring.
    """
    if directory is None:
        return None
    path = pathlib.Path(directory) / _slug(target_name) / role
    database = DirectoryBasedExampleDatabase(path)
    return database if replay_saved else _SaveOnly(database)


class _SaveOnly(ExampleDatabase):
    """Writes through to a database but offers nothing to replay."""

    def __init__(self, database: ExampleDatabase):
        super().__init__()
        self._database = database

    def save(self, key: bytes, value: bytes) -> None:
        self._database.save(key, value)

    def fetch(self, key: bytes) -> Iterable[bytes]:
        return ()

    def delete(self, key: bytes, value: bytes) -> None:
        self._database.delete(key, value)

    def move(self, src: bytes, dest: bytes, value: bytes) -> None:
        self._database.move(src, dest, value)


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text).strip("_") or "target"
