"""rstck: a conformance test kit and fuzzing harness for Reactive Streams."""

from .rules import rule
from .target import InProcessTarget, Profile, Target
from .verdict import NotApplicable, RuleViolation, Unsupported, Verdict
from .verification import (ProcessorVerification, PublisherVerification, SubscriberVerification,
                           Verification)

__all__ = ["InProcessTarget", "NotApplicable", "ProcessorVerification", "Profile", "PublisherVerification",
           "RuleViolation", "SubscriberVerification", "Target", "Unsupported", "Verdict", "Verification", "rule"]
