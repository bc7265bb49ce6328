"""What the machines draw: request arguments, stream lengths and scripted re-entrant reactions."""

from __future__ import annotations

import dataclasses

from hypothesis import strategies as st

from ..api import MAX_DEMAND
from ..signals import show


def weighted(weights: dict) -> st.SearchStrategy:
    """Draw a key with probability in proportion to its weight; shrinks towards the first key."""
    return st.sampled_from([value for value, weight in weights.items() for _ in range(weight)])


# 1 first: the simplest demand. Small numbers keep a subscription live for several steps, where
# most orderings happen; the rest covers 3.9 (0, negatives), 3.17 (2**63-1 and the values past
# it that a 64-bit counter wraps on) and 2**53, where a JavaScript number stops counting exactly.
DEMANDS = {1: 4, 2: 2, 3: 2, 5: 1, 2**53: 1, MAX_DEMAND: 2, MAX_DEMAND + 1: 1, 2**64: 1,
           0: 1, -1: 1, -MAX_DEMAND - 1: 1}
demands = weighted(DEMANDS)

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


on_subscribe_reactions = st.one_of(
    st.none(),
    st.builds(Reaction, action=st.just("request"), n=demands, where=st.just("on_subscribe")),
    st.just(Reaction("cancel", where="on_subscribe")),
)

on_next_reactions = st.one_of(
    st.none(),
    st.builds(Reaction, action=st.just("request"), n=demands, at=st.integers(0, 3)),
    st.builds(Reaction, action=st.just("cancel"), at=st.integers(0, 3)),
)
