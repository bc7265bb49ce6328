"""The findings of one check: the rules the implementation broke, the rules the kit would have broken itself,
and the errors of the check's own reactions.

A probe never raises into the implementation: it records here what breaks a rule, and the check raises the most
severe finding on its own thread, at its next settle or expectation (`raise_pending`).
"""

from __future__ import annotations

from rstck.core.catalog import load_catalog
from rstck.core.signals import Label, Trace
from rstck.core.verdict import RuleViolation

# How many violations of one rule a check keeps in full (the rest are counted).
VIOLATIONS_KEPT_PER_RULE = 3


class KitFault(RuleViolation):
    """The kit was about to break a rule itself; never charged to the target."""


class Findings:
    """What one check found, in the order found; each violation and kit fault is also marked in the trace."""

    def __init__(self, trace: Trace):
        self._trace = trace
        self.violations: list[RuleViolation] = []
        self._counts: dict[str, int] = {}  # violations of each rule, the ones not kept included
        # Another profile's items for the core rules the kit's ends watch (None: that profile has no such rule);
        # set by a check of an opt-in profile (rstck/rules/spi_draft), empty for every other.
        self.rule_aliases: dict[str, str | None] = {}
        self.kit_faults: list[KitFault] = []  # the kit would have broken a rule
        self.kit_errors: list[BaseException] = []  # a check's own reaction raised
        self.must_broken = False  # a MUST item is violated already

    def violate(self, rule: str, expected: str, observed: str, *, check_goes_on: bool = False,
                claim: dict | None = None) -> None:
        """Record a violation. The first few of each rule are kept with their trace context; after that
        they are only counted, so that an implementation that breaks a rule on every element of an endless
        stream costs no memory. `check_goes_on`: the violation does not stop the check at its next settle
        or expectation (it is raised when the check ends), so that the check still judges its own item.
        `claim`: how a reproducer observes it again (rstck/core/evidence.py), when one can."""
        charged = self.rule_aliases.get(rule, rule)
        if charged is None:
            self._trace.note(f"{observed} (not charged by this check: {rule} of the core, or an item it does not "
                             "judge)")
            return
        rule = charged
        seen = self._counts[rule] = self._counts.get(rule, 0) + 1
        if seen > VIOLATIONS_KEPT_PER_RULE:
            return
        violation = RuleViolation(rule, expected, observed, claim=claim)
        violation.check_goes_on = check_goes_on
        self.violations.append(violation)
        self.must_broken = self.must_broken or load_catalog()[rule].is_must
        more = " (further ones are counted, not shown)" if seen == VIOLATIONS_KEPT_PER_RULE else ""
        self._trace.record("violation", "", (Label(f"!! {rule}: {observed}{more}"),))

    def kit_fault(self, rule: str, expected: str, observed: str) -> bool:
        """The kit would break `rule` itself: recorded as the kit's fault (an error verdict). Returns False,
        so that `return findings.kit_fault(...)` both records and refuses."""
        self.kit_faults.append(KitFault(rule, expected, observed))
        self._trace.record("violation", "", (Label(f"!! the kit's own fault, {rule}: {observed}"),))
        return False

    def raise_pending(self, *, every: bool = False) -> None:
        """Raise the most severe violation recorded so far that stops the check (`every`: of all), if any."""
        stopping = self.violations if every else [v for v in self.violations if not getattr(v, "check_goes_on", False)]
        if stopping:
            raise load_catalog().most_severe(stopping)
