"""rstck: a conformance test kit and fuzzing harness for Reactive Streams."""

from .adapters.inprocess import InProcessTarget
from .rules import rule
from .target import Profile, Target
from .verdict import NotApplicable, RuleViolation, Unsupported, Verdict
from .verification import (ProcessorVerification, PublisherVerification, SubscriberVerification,
                           Verification)

__all__ = ["InProcessTarget", "NotApplicable", "ProcessorVerification", "Profile", "PublisherVerification",
           "RuleViolation", "SubscriberVerification", "Target", "Unsupported", "Verdict", "Verification", "rule"]
