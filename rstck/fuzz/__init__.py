"""Fuzzing signal orderings: Hypothesis state machines per role, run as seeded campaigns.

Two ways in: `rstck fuzz` (cli.py) and the pytest fuzz items (pytest_items.py). Both cut a
campaign into `Shard`s; `run_shard(shard) -> rows` runs one anywhere (the local engine uses
processes; a distributed engine can map it over shards). docs/fuzzing.md has the details.
"""

from .campaign import ROLES, Shard, plan_shards, run_local, run_shard
from .profiles import PROFILES, choose_profile
from .run import Finding, run_machine

__all__ = ["PROFILES", "ROLES", "Finding", "Shard", "choose_profile", "plan_shards", "run_local", "run_machine",
           "run_shard"]
