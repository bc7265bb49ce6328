"""The choices a threading style is made of, which combinations the specification allows, and which defect each
style can carry.

A style is one value of each choice; a target's name spells it out, role first:
`publisher__timer__reentrant_lock_across_signals__on_worker__records_and_schedules`. A broken style adds the
defect it carries as a sixth part: `...__records_and_schedules__demand_written_back`.
"""

from __future__ import annotations

import dataclasses
import itertools
import random

ROLES = ("publisher", "subscriber", "processor")
# Where signals are delivered (a subscriber: where it processes them); docs/testing.md says what each means per role.
DELIVERIES = ("caller", "thread_per_request", "timer", "shared_pool", "asyncio_loop", "loop_thread")
# How the state and the serial order of signals (a subscriber: of its calls) are kept.
GUARDS = ("no_lock", "bookkeeping_lock", "reentrant_lock_across_signals", "queue_drain")
# Where on_subscribe is signalled (a subscriber: where it makes its first request).
ON_SUBSCRIBES = ("in_subscribe", "on_worker")
# What a request does (a subscriber: how it asks for more once it has processed half a batch).
REQUESTS = ("drains_inline", "records_and_schedules")

CHOICES = {"role": ROLES, "delivery": DELIVERIES, "guard": GUARDS, "on_subscribe": ON_SUBSCRIBES,
           "request": REQUESTS}

# The defects of the broken matrix, each the classic cause of the item it breaks.
DEFECTS = {
    "overlapping_on_subscribe": "1.3",  # on_subscribe signalled with the guard open: a delivery starts meanwhile
    "demand_written_back": "3.8",  # demand read before on_next, written back after, a foreign request unguarded
    "cancel_written_back": "3.12",  # the cancelled flag read before on_next, written back after
    "unserialised_top_up": "2.7",  # a timer of the subscriber's requests beside its guarded calls
    "signal_before_on_subscribe": "1.9",  # the first drain runs before on_subscribe is signalled
}

SEPARATOR = "__"
# Deliveries that run the drains on one thread of their own: an event loop's.
LOOPS = frozenset({"asyncio_loop", "loop_thread"})
# Deliveries that run scheduled drains on threads other than the caller's.
OWN_THREADS = frozenset({"thread_per_request", "timer", "shared_pool", "loop_thread"})


@dataclasses.dataclass(frozen=True)
class Style:
    role: str
    delivery: str
    guard: str
    on_subscribe: str
    request: str
    defect: str | None = None

    def __post_init__(self):
        for choice, values in CHOICES.items():
            if getattr(self, choice) not in values:
                raise ValueError(f"{choice} {getattr(self, choice)!r} is none of {', '.join(values)}")
        if self.defect is not None and self.defect not in DEFECTS:
            raise ValueError(f"defect {self.defect!r} is none of {', '.join(DEFECTS)}")

    @property
    def name(self) -> str:
        parts = [self.role, self.delivery, self.guard, self.on_subscribe, self.request]
        return SEPARATOR.join(parts + ([self.defect] if self.defect else []))

    @classmethod
    def parse(cls, name: str) -> "Style":
        parts = name.split(SEPARATOR)
        if len(parts) not in (5, 6):
            raise ValueError(f"{name!r} is not ROLE__DELIVERY__GUARD__ON_SUBSCRIBE__REQUEST[__DEFECT]")
        return cls(*parts)

    def conformant(self) -> "Style":
        return dataclasses.replace(self, defect=None)

    def with_defect(self, defect: str) -> "Style":
        return dataclasses.replace(self, defect=defect)


def exclusion(style: Style) -> str | None:
    """Why the specification cannot be kept in `style` (its defect aside), or None when it is allowed.

    Every other combination is conformant by construction (tests/styles/publishers.py, subscribers.py and
    processors.py say how each choice keeps the rules); these are the ones that cannot be:

    - no lock, with signals or calls made on several threads. Demand, position and the serial order are then
      plain attributes that two threads read and write: a request from a second thread during a delivery is
      lost (3.8), or starts a second delivery that overlaps the first (1.3). Without a lock a style must confine
      its state to one thread, and only an event loop does that: requests hop onto it. So no_lock needs a loop
      delivery, except for a subscriber that processes on the caller's thread, whose calls are all made inside
      the signals 1.3 already serialises.
    - a subscriber with no lock that makes its first request inside on_subscribe while it processes on a loop:
      on_subscribe runs on the publisher's thread, and a publisher that delivers inside that request lets the
      loop process and request meanwhile: two calls at once (2.7).
    """
    if style.guard != "no_lock":
        return None
    if style.role == "subscriber" and style.delivery == "caller":
        return None
    if style.delivery not in LOOPS:
        return ("without a lock the state is touched by several threads: a request from a second thread during a "
                "delivery is lost (3.8) or starts a second, overlapping delivery (1.3); only a loop keeps it on one")
    if style.role == "subscriber" and style.on_subscribe == "in_subscribe":
        return ("without a lock the first request, made on the publisher's thread inside on_subscribe, can overlap "
                "a request the loop makes once a publisher that delivers inside that request has handed it "
                "elements (2.7)")
    return None


def role_mismatch(defect: str, role: str) -> str | None:
    """Why `defect` has no place in a `role` at all, or None."""
    rule = DEFECTS[defect]
    if rule == "2.7" and role == "publisher":
        return "2.7 is a subscriber's rule: a publisher makes no calls on a subscription"
    if rule != "2.7" and role == "subscriber":
        return f"{rule} is a publisher's rule: a subscriber signals nobody"
    return None


def defect_exclusion(defect: str, style: Style) -> str | None:
    """Why `defect` is not injected into `style`, or None when it is.

    A defect applies where its race can happen and the kit can make it happen: the kit calls from a second thread
    only while a delivery is in flight on a thread that is not inside one of its own calls (a delivery inside the
    kit's `request` leaves no room for one, 2.7), and never into a target that lives on its event loop. A further
    reason is where the kit does not provoke the race in every run (a re-entrant-lock processor's 3.12); it says
    why."""
    rule = DEFECTS[defect]
    mismatch = role_mismatch(defect, style.role)
    if mismatch is not None:
        return mismatch
    if rule in ("1.9", "2.7"):
        return None
    if style.delivery == "asyncio_loop":
        return ("the target lives on the kit's event loop: the kit makes no call from a second thread into it, and "
                "everything it does runs one callback at a time, so the race cannot happen")
    if rule == "1.3":
        if style.delivery == "loop_thread" and style.on_subscribe == "on_worker":
            return ("on_subscribe and every delivery run on the loop's one thread, one callback at a time: the "
                    "drain a request inside on_subscribe schedules runs after on_subscribe returns")
        if style.role == "processor":
            if style.delivery == "caller" and style.on_subscribe == "on_worker" and \
                    style.request == "records_and_schedules":
                return ("on_subscribe runs on the caller's trampoline, so the drain a request inside it schedules "
                        "waits there, holding the right to drain, until on_subscribe returns: the upstream's "
                        "elements, arriving meanwhile on the kit's second thread, find that right taken")
            return None  # the kit's upstream, subscribed on a second thread, delivers while on_subscribe runs
        if style.request != "records_and_schedules" or style.delivery not in OWN_THREADS:
            return ("a request made inside on_subscribe drains on the same thread, nested inside on_subscribe: "
                    "no delivery on another thread can overlap it")
        return None
    if rule == "3.12" and style.role == "processor" and style.guard == "reentrant_lock_across_signals":
        return ("the processor's one lock is held while its upstream delivers, and the kit's downstream request "
                "waits for it, so the first element can come while that request is still under way: the kit then "
                "makes no second call (2.7), and no cancel races the delivery")
    if style.delivery == "caller" and rule == "3.12":
        return ("every delivery runs inside a call of the kit's (subscribe, request), where the kit cannot cancel "
                "from a second thread")
    if rule == "3.12" and style.request == "drains_inline" and style.delivery != "loop_thread":
        return ("a request drains on the requesting thread (a processor's upstream element, on the thread that "
                "sent it): the deliveries a cancel could race with run inside the kit's own calls, where the kit "
                "cannot cancel from a second thread")
    return None


def allowed_styles(role: str | None = None) -> list[Style]:
    """Every allowed combination, in a fixed order."""
    styles = [Style(*values) for values in itertools.product(ROLES, DELIVERIES, GUARDS, ON_SUBSCRIBES, REQUESTS)]
    return [s for s in styles if exclusion(s) is None and (role is None or s.role == role)]


def broken_styles() -> list[Style]:
    """Every allowed combination with every defect that applies to it."""
    return [s.with_defect(d) for s in allowed_styles() for d in DEFECTS if defect_exclusion(d, s) is None]


def covering_sample(styles: list[Style], choices: tuple[str, ...], size: int, seed: int) -> list[Style]:
    """A fixed sample of `size` styles in which every value of every choice in `choices` appears at least once:
    greedy picks of the style that covers the most values not yet seen (ties broken by the seeded shuffle), then
    seeded picks of the rest."""
    pool = list(styles)
    random.Random(seed).shuffle(pool)
    wanted = {(choice, value) for choice in choices for value in {getattr(s, choice) for s in pool}}
    picked: list[Style] = []
    while wanted:
        best = max(pool, key=lambda s: len(wanted & {(c, getattr(s, c)) for c in choices}))
        picked.append(best)
        pool.remove(best)
        wanted -= {(c, getattr(best, c)) for c in choices}
    return picked + pool[:max(0, size - len(picked))]
