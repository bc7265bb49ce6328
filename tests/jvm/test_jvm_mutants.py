"""Every item the kit judges on a JVM publisher, subscriber or processor has a Java mutant, caught on that item
(docs/jvm.md#mutants). The mutants are tests/jvm/java/PublisherMutants.java, SubscriberMutants.java and the fault
flags of Publishers.java, Subscribers.java and Processors.java; the two race mutants of Races.java are caught in
tests/jvm/test_jvm_races.py, which also reads their traces.

Each mutant runs in this process, through the worker's one JVM, with only its item's checks: the same plan and
runner as `rstck check`, without a process and a JVM per mutant. One mutant also goes through `rstck check` end to
end. The soak runs every check on every mutant, and asserts that no item fails or warns but those the table names,
beyond what the mutant's reference itself gives."""

from __future__ import annotations

import dataclasses
import functools

import pytest

from rstck.adapters.jvm.target import JvmTarget
from rstck.core.settle import DEFAULT_DEADLINE_S
from rstck.protocols.jvm.process import shared_jvm
from rstck.execution.plan import plan
from rstck.execution.runner import run_check
from rstck.reports.items import item_verdicts

from .checking import PUBLISHER_MUTANTS, item_verdicts as rstck_check_verdicts

# Long enough for a loaded machine, short because a caught mutant's check may wait for a missing signal until it.
# The soak, which runs every check, keeps the kit's own deadline.
DEADLINE_S = 3.0


@dataclasses.dataclass(frozen=True)
class Mutant:
    """A Java class and the item its fault breaks (`fails`, or `warns` for a SHOULD or RECOMMENDED item), with the
    other items the same fault breaks too (`also_fails`, `also_warns`), each for a reason the docs give."""

    class_name: str
    fails: str = ""
    warns: str = ""
    also_fails: frozenset[str] = frozenset()
    also_warns: frozenset[str] = frozenset()

    @property
    def item(self) -> str:
        return self.fails or self.warns


def publisher(name: str, fails: str = "", warns: str = "", also_fails=(), also_warns=()) -> Mutant:
    return Mutant(f"PublisherMutants${name}", fails, warns, frozenset(also_fails), frozenset(also_warns))


def subscriber(name: str, fails: str = "", warns: str = "") -> Mutant:
    return Mutant(f"SubscriberMutants${name}", fails, warns)


MUTANTS = [
    *(Mutant(f"Publishers${name}", item) for name, item in PUBLISHER_MUTANTS.items() if name != "RequestThrows"),
    # a second request throws: every item whose sentence needs a request to return normally fails with it
    Mutant("Publishers$RequestThrows", "3.16", also_fails=frozenset({"1.6", "2.13", "3.2", "3.6", "3.9", "3.17"})),
    publisher("FailedCompletes", "1.4"),
    # the subscriber never hears of the end, so a request(0) there is owed an onError (3.9) that never comes
    publisher("NeverCompletes", "1.5", also_fails={"3.9"}),
    publisher("ErrorWhenCancelledAfterEnd", "1.6"),
    # the pump keeps every subscriber it ever had: 3.13, where the kit observes it
    publisher("PumpsCancelledSubscribers", "1.8", also_fails={"3.13"}),
    publisher("OnlyFirstSubscriberServed", "1.10"),
    publisher("OnSubscribeTwice", "2.12"),
    publisher("SwallowsSubscriberError", "2.13"),
    # request(0) or request(2^63-1) made inside onNext throws too: 3.9's onError and 3.16's normal return are lost
    publisher("ReentrantRequestThrows", "3.2", also_fails={"3.9", "3.16"}),
    publisher("UnboundedRecursion", "3.3", also_warns={"3.3.depth-one"}),
    publisher("DepthThree", warns="3.3.depth-one"),
    publisher("SlowFirstRequest", warns="3.4"),
    publisher("SlowCancel", "3.5"),
    publisher("RequestAfterCancelDelivers", "3.6"),
    publisher("SecondCancelCompletes", "3.7"),
    publisher("UnhelpfulRequestError", warns="3.9.message"),
    # an ignored cancel leaves the demand standing, which a request after it draws on (3.6)
    publisher("CancelIgnored", "3.12", also_fails={"3.6"}),
    # it throws from every cancel: after the end (1.6) and when called twice or from two threads (3.5)
    publisher("CancelThrows", "3.15", also_fails={"1.6", "3.5"}),
    publisher("IntDemand", "3.17"),
    Mutant("Subscribers$OverlappingRequests", "2.7"),
    Mutant("Subscribers$SecondSubscriptionKept", "2.5"),
    Mutant("Subscribers$OnNextThrows", "2.13"),
    # 2.13: a signal method must return normally
    Mutant("Subscribers$OnCompleteThrows", "2.9", also_fails=frozenset({"2.13"})),
    Mutant("Subscribers$ProcessedTwice", "2.11"),
    subscriber("NeverRequests", "2.1"),
    subscriber("OneAtATime", warns="2.1.batch-demand"),
    subscriber("SlowFirstElement", warns="2.2"),
    subscriber("CancelsInOnComplete", "2.3"),
    subscriber("RaisesAfterCancel", "2.8"),
    subscriber("RaisesOnEarlyError", "2.10"),
    subscriber("SharedSubscription", "3.1"),
    # At the deadline the kit stops the JVM (JvmTarget.session_abandoned); the onComplete that never returned then
    # ends with the JVM's connection refused, which is the kit's doing, not the target raising (2.13): see
    # test_a_call_the_kit_cut_off_by_stopping_the_jvm_is_not_charged_as_the_targets_raise.
    subscriber("BlocksInOnComplete", "async.non-blocking"),
    # as a publisher it delivers one element fewer than requested: every check that counts them sees it
    Mutant("Processors$DropsAnElement", "4.1", also_fails=frozenset({"1.5", "1.10", "3.2", "3.8", "3.17"})),
    # with its upstream failed, it is a failed publisher that never signals onError (1.4)
    Mutant("Processors$ErrorSwallowed", "4.2", also_fails=frozenset({"1.4"})),
    # 4.2's recommendation to cancel the upstream when the last subscriber cancels is the same behaviour
    Mutant("Processors$KeepsUpstreamOpen", "2.6", also_warns=frozenset({"4.2.cancel-upstream"})),
]


def name_of(mutant: Mutant) -> str:
    return mutant.class_name


# The reference each mutant breaks: an item its reference fails too is not the mutant's finding.
REFERENCES = {"Publishers": "Publishers$Range", "PublisherMutants": "Publishers$Range",
              "Subscribers": "Subscribers$Batched", "SubscriberMutants": "Subscribers$Batched",
              "Processors": "Processors$Drain"}


@functools.cache
def reference_findings(class_name: str, classes: str) -> dict[str, set[str]]:
    verdicts = charged(class_name, classes, None, deadline_s=DEFAULT_DEADLINE_S)
    return {verdict: judged(verdicts, verdict) for verdict in ("fail", "warn", "error")}


def charged(class_name: str, classes: str, rules: str | None, reasons: dict[str, str] | None = None, *,
            deadline_s: float = DEADLINE_S) -> dict[str, str]:
    """Each item's verdict from the checks of `rules` (every check when None) on `jvm:CLASS`, run in this process
    as `rstck check` runs them, with the items as its table shows them (and each one's reason into `reasons`)."""
    target = JvmTarget(class_name, classpath=[classes])
    results = [run_check(planned.check, planned.target, timeout_s=deadline_s)
               for planned in plan(target, rules=rules)]
    items = item_verdicts([r.row() for r in results], rules)
    if reasons is not None:
        reasons.update({item: found.reason for item, found in items.items()})
    return {item: found.verdict for item, found in items.items()}


def judged(verdicts: dict[str, str], verdict: str) -> set[str]:
    return {item for item, found in verdicts.items() if found == verdict}


@pytest.mark.parametrize("mutant", MUTANTS, ids=name_of)
def test_each_mutant_is_caught_on_its_item(java_classes, mutant):
    verdicts = charged(mutant.class_name, java_classes, mutant.item)
    assert verdicts.get(mutant.item) == ("fail" if mutant.fails else "warn"), verdicts
    assert judged(verdicts, "fail") <= {mutant.fails} | mutant.also_fails, verdicts
    assert judged(verdicts, "error") == set(), verdicts


@pytest.mark.soak
@pytest.mark.parametrize("mutant", MUTANTS, ids=name_of)
def test_each_mutant_fails_no_item_but_those_it_breaks(java_classes, mutant):
    """Every check on the mutant, in the soak only. A mutant whose fault is slowness may go over the 20 s budget:
    SlowFirstRequest's 0.6 s in each publisher's first request come to about 35 s over a publisher's 57 checks."""
    # A JVM of its own, as `rstck check` gives it: what the worker's JVM kept of earlier mutants (their threads)
    # was once seen to keep a settle from deciding (a 2.7 deadline on SlowFirstElement, 2 soak runs of 3).
    shared_jvm([java_classes]).stop()
    reasons: dict[str, str] = {}
    verdicts = charged(mutant.class_name, java_classes, None, reasons, deadline_s=DEFAULT_DEADLINE_S)
    reference = reference_findings(REFERENCES[mutant.class_name.split("$")[0]], java_classes)
    found = {verdict: judged(verdicts, verdict) - reference[verdict] for verdict in ("fail", "warn", "error")}
    expected = {"fail": {mutant.fails} - {""} | mutant.also_fails, "warn": {mutant.warns} - {""} | mutant.also_warns,
                "error": set()}
    assert found == expected, "\n".join(f"{item}: {reasons[item]}" for verdict in found
                                        for item in sorted(found[verdict] ^ expected[verdict]) if item in reasons)


def test_a_mutant_is_caught_by_rstck_check_end_to_end(java_classes, tmp_path):
    verdicts = rstck_check_verdicts(java_classes, "SubscriberMutants$CancelsInOnComplete", tmp_path, "2.3")
    assert verdicts.get("2.3") == "fail", verdicts


def test_a_call_the_kit_cut_off_by_stopping_the_jvm_is_not_charged_as_the_targets_raise(java_classes):
    """What kept SubscriberMutants$BlocksInOnComplete from being caught on its item in every run: a call into Java
    that ends because the kit stopped the JVM (a hang at its deadline) ends, at times, with the ConnectionRefusedError
    py4j raises when it reconnects, not with a Py4JNetworkError; JvmTarget.call_not_made must know it as the JVM
    gone, or the kit records the call as the target raising (2.13)."""
    from rstck.core.verdict import TargetError

    target = JvmTarget("SubscriberMutants$BlocksInOnComplete", classpath=[java_classes])
    refused = ConnectionRefusedError(111, "Connection refused")
    assert isinstance(target.call_not_made(refused, "1#1.on_complete()"), TargetError)
