"""Verdicts, and the exceptions a check raises to reach one.

A check never returns a verdict: it returns normally (pass) or raises. The level of
the violated catalogue item decides what a violation means: a MUST item fails, a
SHOULD or RECOMMENDED item warns, a MAY item is unsupported.
"""

from __future__ import annotations

import enum


class Verdict(str, enum.Enum):
    PASS = "pass"
    FAIL = "fail"  # a MUST item violated; the trace is the evidence
    WARN = "warn"  # a SHOULD or RECOMMENDED item not met; still conformant
    UNSUPPORTED = "unsupported"  # a MAY item not offered
    NOT_APPLICABLE = "n/a"  # the target lacks what the check needs
    UNTESTED = "untested"  # not observable; the reason is stated
    ERROR = "error"  # the kit or the target's factory broke; never the rule's fault
    ALLOWED = "allowed"  # a fail or warn that an allowlist entry accepts until its expiry date

    def __str__(self) -> str:
        return self.value


LEVEL_VERDICTS = {
    "MUST": Verdict.FAIL,
    "MUST NOT": Verdict.FAIL,
    "REQUIRED": Verdict.FAIL,
    "SHALL": Verdict.FAIL,
    "SHOULD": Verdict.WARN,
    "SHOULD NOT": Verdict.WARN,
    "RECOMMENDED": Verdict.WARN,
    "NOT RECOMMENDED": Verdict.WARN,
    "MAY": Verdict.UNSUPPORTED,
    "OPTIONAL": Verdict.UNSUPPORTED,
}


# The three kinds of level, by what breaking them means: the report's level filter, the pytest level markers.
LEVEL_GROUPS = {level: {Verdict.FAIL: "MUST", Verdict.WARN: "SHOULD", Verdict.UNSUPPORTED: "MAY"}[verdict]
                for level, verdict in LEVEL_VERDICTS.items()}


class RuleViolation(AssertionError):
    """The implementation did not do what catalogue item `rule` demands.

    `rule` may differ from the rule of the check that observed it: a check for 1.1
    that sees a signal after on_complete reports 1.7, so every defect is charged to
    the item it breaks.
    """

    def __init__(self, rule: str, expected: str, observed: str = "", *, timed_out: bool = False,
                 claim: dict | None = None):
        super().__init__(f"{rule}: expected {expected}; observed {observed}")
        self.rule = rule
        self.expected = expected
        self.observed = observed
        self.timed_out = timed_out
        # How a reproducer observes the violation again (rstck/core/evidence.py); None: no reproducer can yet.
        self.claim = claim


class Unsupported(Exception):
    """A MAY item the implementation does not offer."""


class NotApplicable(Exception):
    """The target cannot serve this check (a factory or capability is missing)."""


class TargetError(Exception):
    """A factory of the target raised, or the target is misconfigured: not the rule's fault."""


class BadInput(Exception):
    """The user's input (a target string, a rule selection, an option) cannot be used."""
