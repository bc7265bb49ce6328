"""The threading-style matrix broken on purpose: each style with the classic defect behind one of the rules the
kit's schedule perturbation targets (tests/styles/choices.py, DEFECTS), wherever the race can happen and the kit
can make it happen (`defect_exclusion` says why not elsewhere). `rstck check`, run as a user runs it, catches each
on its item: a `fail` row for that rule in its results. `make test` runs a fixed, seeded sample with every defect
and every delivery in it; `make soak` every broken style (docs/testing.md, "The threading-style matrix")."""

from __future__ import annotations

import pytest

from .choices import DEFECTS, DELIVERIES, ROLES, Style, allowed_styles, broken_styles, covering_sample, defect_exclusion
from .running import CheckRun, rstck_check

BROKEN_SEED = 32
BROKEN_SAMPLE = covering_sample(broken_styles(), ("defect", "delivery", "role"), size=8, seed=BROKEN_SEED)


def assert_caught(run: CheckRun) -> None:
    rule = DEFECTS[run.style.defect]
    assert run.caught(rule), f"{run.style.defect} not caught on {rule}\n" + run.summary()
    assert run.returncode == 1, run.summary()


def test_the_sample_holds_every_defect_and_every_delivery():
    assert {style.defect for style in BROKEN_SAMPLE} == set(DEFECTS)
    assert {style.delivery for style in BROKEN_SAMPLE} == set(DELIVERIES)
    assert {style.role for style in BROKEN_SAMPLE} == set(ROLES)


# The roles each defect is injected into: a subscriber's rule into subscribers and processors' upstream side; the
# publisher's rules into publishers and processors' downstream side.
ROLES_OF = {"1.3": {"publisher", "processor"}, "3.8": {"publisher", "processor"},
            "3.12": {"publisher", "processor"}, "1.9": {"publisher", "processor"}, "2.7": {"subscriber", "processor"}}


def test_every_defect_applies_in_the_roles_it_concerns_and_says_why_not_elsewhere():
    for defect, rule in DEFECTS.items():
        assert {style.role for style in broken_styles() if style.defect == defect} == ROLES_OF[rule], defect
        for style in allowed_styles():
            reason = defect_exclusion(defect, style)
            assert reason is None or len(reason) > 20, (defect, style.name)


def test_a_processor_calling_its_upstream_beside_its_guard_is_caught_while_its_downstream_is_busy():
    """2.7 on a processor's upstream side: a timer's request beside the calls its lock keeps serial. Its delivery
    downstream once ended the kit's linger inside the upstream request before the timer fired, and the race showed
    in some runs only (1 of 3 missed); a linger now ends only on a call on the subscription that lingers."""
    style = Style.parse("processor__timer__reentrant_lock_across_signals__on_worker__records_and_schedules__"
                        "unserialised_top_up")
    assert_caught(rstck_check(style, repro=False))


@pytest.mark.parametrize("style", BROKEN_SAMPLE, ids=lambda style: style.name)
def test_rstck_check_catches_the_defect_on_its_item(style):
    assert_caught(rstck_check(style, repro=False))


def test_a_reproducer_is_written_for_a_finding_and_only_for_a_failed_item():
    """The counterpart of the conformant matrix's "no reproducer": with a finding, `--repro` writes its script."""
    style = next(s for s in BROKEN_SAMPLE if s.defect == "signal_before_on_subscribe")
    run = rstck_check(style)
    assert_caught(run)
    assert run.reproducers, run.summary()
    failed = run.failed_items()
    assert all(any(name.startswith(f"repro-{rule}-") for rule in failed) for name in run.reproducers), (
        run.reproducers, failed)


@pytest.mark.soak
@pytest.mark.parametrize("style", broken_styles(), ids=lambda style: style.name)
def test_every_broken_style_is_caught_on_its_item(style):
    assert_caught(rstck_check(style, repro=False))
