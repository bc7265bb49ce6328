"""`rstck check jvm:...` and `rstck fuzz jvm:...` on real JVM libraries: every verdict other than pass, of the checks
and of the fuzz phase, is the one confirmed by hand in docs/jvm.md ("Real libraries"), so a verdict that changes
fails here; in the soak, from more seeds, in every run, and while two busy processes load both cores."""

from __future__ import annotations

import os
import pathlib
import subprocess

import pytest

from ...stability import stability_runs
from ..checking import RSTCK
from .conftest import DEBIAN_JARS, why_no_debian_jars
from .verdicts import CONFIRMED, CONFIRMED_FUZZ, both_cores_busy, check, fuzz

CONFIRM = pathlib.Path(__file__).resolve().parent / "confirm"

# The suite's fuzz phase: one seeded run of this many examples per target, the checks' JVM and run shared.
SUITE_FUZZ_EXAMPLES = 20
# The soak's: the phase's default budget (100 examples from seed 0), and `rstck fuzz` from seeds of its own.
SOAK_FUZZ_EXAMPLES = 100
SOAK_FUZZ_SEEDS = (1, 101)  # runs of 50 examples: seeds 1-4 and 101-104
SOAK_FUZZ_EXAMPLES_PER_SEED = 200
LOADED_RUNS = 3
# The fuzz phase's 3.9 finding on HandlerPublisher (seed 105 of `rstck fuzz --seed 100`, shrunk): a subscriber
# subscribes and stays; a second one calls request(-2**63) inside onSubscribe and is rejected.
REJECTED_SUBSCRIBER_ASKS_NON_POSITIVE = "105:AXicY3BkcGRggGAmEAXn4cIcIBoGiVGqCMRsEKUAyXMImw=="


def each_factory_on_a_worker_of_its_own():
    """The soak's parameters: each factory's runs in an xdist group of their own, so that the soak's workers share
    them out even where a group given to every JVM test (tests/jvm/conftest.py) would hold them on one worker."""
    return [pytest.param(factory, marks=pytest.mark.xdist_group(f"real-{factory}")) for factory in CONFIRMED]


def assert_confirmed(run, factory: str, fuzz_examples: int, what: str = "") -> None:
    assert run.unconfirmed(factory) == {}, (
        f"{what}verdicts not confirmed by hand (docs/jvm.md, Real libraries): {run.unconfirmed(factory)}\n"
        f"{run.output[-6000:]}")
    assert run.fuzz_findings == CONFIRMED_FUZZ[factory], f"{what}fuzz phase:\n{run.output[-6000:]}"
    assert run.whole_fuzz_phase(factory, fuzz_examples), f"{what}the fuzz phase did not run whole: {run.fuzz_lines}"


@pytest.mark.parametrize("factory", CONFIRMED)
def test_each_verdict_of_the_checks_and_the_fuzz_phase_is_the_one_confirmed_by_hand(real_classpath, tmp_path,
                                                                                     factory):
    assert_confirmed(check(real_classpath, factory, tmp_path, fuzz_examples=SUITE_FUZZ_EXAMPLES), factory,
                     SUITE_FUZZ_EXAMPLES)


@pytest.mark.soak
@pytest.mark.parametrize("factory", each_factory_on_a_worker_of_its_own())
@pytest.mark.parametrize("seed", SOAK_FUZZ_SEEDS)
def test_rstck_fuzz_finds_only_what_was_confirmed_from_seeds_of_its_own(real_classpath, tmp_path, factory, seed):
    """Soak only, over the 20 s budget (up to 30 s here): 200 examples against a Java library."""
    found, output = fuzz(real_classpath, factory, tmp_path / "results", seed=seed,
                         examples=SOAK_FUZZ_EXAMPLES_PER_SEED)
    assert found == CONFIRMED_FUZZ[factory], output[-6000:]


@pytest.mark.stability
@pytest.mark.soak
@pytest.mark.parametrize("factory", each_factory_on_a_worker_of_its_own())
def test_the_verdicts_are_the_same_in_every_run(real_classpath, tmp_path, factory):
    """Soak only, over the 20 s budget: twenty whole runs, 5 to 30 s each here."""
    for number in range(1, stability_runs() + 1):
        run = check(real_classpath, factory, tmp_path / f"run-{number}", fuzz_examples=SOAK_FUZZ_EXAMPLES)
        assert_confirmed(run, factory, SOAK_FUZZ_EXAMPLES, what=f"run {number}: ")


@pytest.mark.soak
@pytest.mark.parametrize("factory", each_factory_on_a_worker_of_its_own())
def test_the_verdicts_are_the_same_while_both_cores_are_busy(real_classpath, tmp_path, factory):
    """The confirmed verdicts are the idle ones (the suite's test above); with two processes spinning, one per
    core, besides whatever else the machine runs, each run must give exactly them. Soak only, over the 20 s budget:
    three whole runs, 20 to 50 s in all here."""
    with both_cores_busy():
        for number in range(1, LOADED_RUNS + 1):
            run = check(real_classpath, factory, tmp_path / f"run-{number}", fuzz_examples=SOAK_FUZZ_EXAMPLES)
            assert_confirmed(run, factory, SOAK_FUZZ_EXAMPLES, what=f"loaded run {number}: ")


def test_the_confirmation_of_submission_publisher_still_shows_its_behaviour(java_classes):
    # java_classes: skips where there is no JDK. The script needs no jar and no kit.
    run = subprocess.run(["java", str(CONFIRM / "ConfirmSubmission.java")], capture_output=True, text=True,
                         timeout=60)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "2.13 fail: after onNext threw, SubmissionPublisher signalled [onSubscribe, onNext(0)" in run.stdout


def test_the_confirmation_of_netty_still_shows_its_behaviour(java_classes):
    # java_classes: skips where there is no JDK. The script needs Debian's jars and no kit.
    reason = why_no_debian_jars()
    if reason:
        pytest.skip(reason)
    run = subprocess.run(["java", "-cp", os.pathsep.join(DEBIAN_JARS), str(CONFIRM / "ConfirmNetty.java")],
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "2.13 fail: after onNext threw, HandlerPublisher signalled [onSubscribe, onNext(0)" in run.stdout
    assert "2.8 n/a: HandlerSubscriber took 64 elements on an open channel; cancelled=false" in run.stdout
    assert ("3.9 (fuzz) rejected, not a range error: a second subscriber that called request(0) in onSubscribe got "
            "[onSubscribe, request(0) returned on main, onError(java.lang.IllegalStateException: This publisher only "
            "supports one subscriber) on main]") in run.stdout


def test_the_fuzzer_charges_no_3_9_to_a_subscriber_the_publisher_rejected(real_classpath, tmp_path):
    """The kit's error, not the library's (docs/jvm.md, Real libraries), shown by the fuzz phase's shrunk finding:
    HandlerPublisher rejects a second subscriber with onSubscribe (a subscription that ignores every request) and
    onError, both inside subscribe; that subscriber's request(-2**63), made inside onSubscribe, comes after the
    rejection was decided, as a failed publisher's error is, whose onError the fuzzer accepts there (3.9)."""
    command = [RSTCK, "fuzz", "jvm:NettyPublishers$Handler", "--classpath", real_classpath, "--role", "publisher",
               "--steps", "30", "--replay", REJECTED_SUBSCRIBER_ASKS_NON_POSITIVE, "--database", "none"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=tmp_path)
    output = done.stdout + done.stderr
    assert "replaying the shrunk example" in output, output[-4000:]
    assert done.returncode == 0 and "did not fail this time" in output, output[-4000:]
