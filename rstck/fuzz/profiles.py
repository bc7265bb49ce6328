"""Budgets and Hypothesis settings for fuzz runs: the rstck profiles and the example database.

A profile is a budget (examples per role, steps per example, examples per seeded run)
registered under the same name as a Hypothesis settings profile, so that
`hypothesis.settings.get_profile("rstck-deep")` shows what a nightly run uses. Profiles
are looked up, never loaded: loading one would change the settings of the user's own
Hypothesis tests in the same process.
"""

from __future__ import annotations

import dataclasses
import os
import pathlib
import re
from collections.abc import Iterable

from hypothesis import HealthCheck, Phase, Verbosity, settings
from hypothesis.database import DirectoryBasedExampleDatabase, ExampleDatabase

from ..verdict import BadInput

PROFILE_ENV = "RSTCK_FUZZ_PROFILE"
# Relative to the directory rstck runs in (the pytest rootdir for fuzz items): one place,
# next to the results, ignored by the project's .gitignore.
DEFAULT_DATABASE = pathlib.Path(".rstck") / "hypothesis"
# Hypothesis keeps caches of its own (e.g. constants read from source files) in ./.hypothesis
# unless told otherwise; `rstck fuzz` tells it to use this instead.
HYPOTHESIS_STORAGE = pathlib.Path(".rstck") / "hypothesis-storage"


@dataclasses.dataclass(frozen=True)
class Budget:
    """How much a campaign fuzzes each role."""

    examples: int  # examples (state machine runs) per role
    steps: int  # steps per example (Hypothesis' stateful_step_count)
    examples_per_run: int  # examples of one seeded Hypothesis run: the unit a shard is made of


PROFILES = {
    # CI and pytest fuzz items: small, and deterministic with the fixed base seed CI uses.
    "rstck-ci": Budget(examples=200, steps=20, examples_per_run=50),
    "rstck-default": Budget(examples=1_000, steps=30, examples_per_run=100),
    # Nightly: longer examples reach deeper states (more subscribers, later cancels).
    "rstck-deep": Budget(examples=20_000, steps=60, examples_per_run=250),
}

# Hypothesis' explain phase re-runs a failing example many times to annotate which arguments
# matter; a fuzz finding is read as a trace, so its time is better spent finding the next one.
_PHASES = (Phase.explicit, Phase.reuse, Phase.generate, Phase.target, Phase.shrink)

for _name, _budget in PROFILES.items():
    settings.register_profile(_name, max_examples=_budget.examples_per_run, stateful_step_count=_budget.steps,
                              deadline=None, database=None, print_blob=True, report_multiple_bugs=True,
                              phases=_PHASES, suppress_health_check=list(HealthCheck), verbosity=Verbosity.quiet)


def keep_hypothesis_files_in_rstck_directory() -> None:
    """Point Hypothesis' own storage under .rstck/ (unless $HYPOTHESIS_STORAGE_DIRECTORY says
    otherwise). Only for processes rstck owns: under pytest the user's settings stand."""
    os.environ.setdefault("HYPOTHESIS_STORAGE_DIRECTORY", str(HYPOTHESIS_STORAGE.absolute()))


def choose_profile(name: str | None = None, *, ci_default: bool = False) -> str:
    """The profile named, else $RSTCK_FUZZ_PROFILE, else rstck-ci on CI (or when asked), else rstck-default."""
    chosen = name or os.environ.get(PROFILE_ENV) or (
        "rstck-ci" if ci_default or os.environ.get("CI", "").lower() in ("1", "true", "yes") else "rstck-default")
    if chosen not in PROFILES:
        raise BadInput(f"fuzz profile {chosen!r} is unknown; choose one of {', '.join(PROFILES)}")
    return chosen


def run_settings(profile: str, *, examples: int, steps: int, database: ExampleDatabase | None,
                 shrink: bool = True) -> settings:
    """Settings of one seeded run. `deadline=None`: the kit's own watchdog bounds each step,
    and turns a step that never returns into a violation instead of a Hypothesis error.
    Without `shrink` a run stops at its first failing example and reports it as found."""
    phases = _PHASES if shrink else tuple(p for p in _PHASES if p is not Phase.shrink)
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
