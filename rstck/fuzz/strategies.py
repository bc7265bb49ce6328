"""What the machines draw: request arguments, stream lengths and scripted re-entrant reactions."""

from __future__ import annotations

import dataclasses

from hypothesis import strategies as st

from rstck.api import MAX_DEMAND
from rstck.core.signals import show


def weighted(weights: dict) -> st.SearchStrategy:
    """Draw a key with probability in proportion to its weight; shrinks towards the first key."""
    return options([value for value, weight in weights.items() for _ in range(weight)])


def options(values: list) -> st.SearchStrategy:
    """One of `values`, shrinking towards the first: a single integer draw. Hypothesis' cost is
    per draw, and a step's arguments are most of a step's draws; sampled_from, one_of and
    builds each draw several times."""
    return st.integers(0, len(values) - 1).map(values.__getitem__)


# 1 first: the simplest demand. Small numbers keep a subscription live for several steps, where
# most orderings happen; the rest covers 3.9 (0, negatives), 3.17 (2**63-1 and the values past
# it that a 64-bit counter wraps on) and 2**53, where a JavaScript number stops counting exactly.
DEMANDS = {1: 4, 2: 2, 3: 2, 5: 1, 2**53: 1, MAX_DEMAND: 2, MAX_DEMAND + 1: 1, 2**64: 1,
           0: 1, -1: 1, -MAX_DEMAND - 1: 1}
demands = weighted(DEMANDS)

# The signals a subscriber machine sends with a None argument (2.13).
NONE_ARGUMENTS = ["on_next", "on_subscribe", "on_error"]

# Stream lengths: the empty stream (1.5 without demand), short ones, and a stream long enough for
# unbounded recursion (3.3) and ignored cancels (3.12) to show.
STREAM_LENGTHS = {3: 2, 0: 1, 1: 1, 2: 1, 5: 1, 16: 3}
stream_lengths = weighted(STREAM_LENGTHS)


@dataclasses.dataclass(frozen=True)
class Reaction:
    """What a kit subscriber does from inside a signal: request(n) or cancel.

    `at` is the number of the on_next that triggers it (0: every on_next); in on_subscribe
    it is ignored. Frozen and with a short repr: it appears in the printed steps.
    """

    action: str  # "request" or "cancel"
    n: int = 1
    at: int = 0
    where: str = "on_next"  # or "on_subscribe"

    def due(self, count: int) -> bool:
        return self.at == 0 or self.at == count

    def __repr__(self) -> str:
        what = f"request({show(self.n)})" if self.action == "request" else "cancel()"
        if self.where == "on_subscribe":
            return f"{what} in on_subscribe"
        return f"{what} in {'each on_next' if self.at == 0 else f'on_next #{self.at}'}"


def _reactions(where: str, at: range) -> list[Reaction | None]:
    """No reaction, a request of each demand (by its weight) or a cancel, a third each; first None."""
    requests = [Reaction("request", n, k, where) for n, weight in DEMANDS.items() for _ in range(weight) for k in at]
    cancels = [Reaction("cancel", 1, k, where) for k in at]
    share = len(requests)  # each third gets as many entries as the requests
    return [None] * share + requests + cancels * (share // len(cancels))


on_subscribe_reactions = options(_reactions("on_subscribe", range(1)))
on_next_reactions = options(_reactions("on_next", range(4)))
