"""Fuzz budgets, by profile, and where fuzz runs keep their files: what the command line needs
to describe `rstck fuzz` without importing Hypothesis.

A profile is a budget (examples per role, steps per example, examples per seeded run, time to
shrink) registered under the same name as a Hypothesis settings profile (profiles.py).
"""

from __future__ import annotations

import dataclasses
import os
import pathlib

from rstck.core.verdict import BadInput

ROLES = ("publisher", "subscriber", "processor")

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

    examples: int  # examples (state machine runs) per role, shrinking included
    steps: int  # steps per example (Hypothesis' stateful_step_count)
    examples_per_run: int  # examples one seeded Hypothesis run generates: the unit a shard is made of
    shrink_time_s: float  # the longest one run spends shrinking what it found


PROFILES = {
    # CI and pytest fuzz items: small, and deterministic with the fixed base seed CI uses.
    "rstck-ci": Budget(examples=200, steps=20, examples_per_run=50, shrink_time_s=10),
    "rstck-default": Budget(examples=1_000, steps=30, examples_per_run=100, shrink_time_s=30),
    # Nightly: longer examples reach deeper states (more subscribers, later cancels).
    "rstck-deep": Budget(examples=20_000, steps=60, examples_per_run=250, shrink_time_s=120),
}
DEFAULT_SHRINK_TIME_S = PROFILES["rstck-default"].shrink_time_s


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
