"""Fuzzing signal orderings: Hypothesis state machines per role, run as seeded campaigns.

Two ways in: `rstck fuzz` (rstck/cli/fuzz.py) and the pytest fuzz items (rstck/plugin/fuzz_items.py). Both
cut a campaign into `Shard`s; `run_shard(shard) -> rows` runs one anywhere (the local engine runs them in
supervised worker processes; a distributed engine can map it over shards). docs/fuzzing.md has the details.
The names below are imported when first used: describing `rstck fuzz` needs no Hypothesis.
"""

import importlib

_EXPORTS = {"PROFILES": "budgets", "ROLES": "budgets", "choose_profile": "budgets", "Shard": "campaign",
            "plan_shards": "campaign", "run_local": "local_engine", "run_shard": "campaign", "Finding": "run",
            "run_machine": "run"}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
