"""The opt-in spi-draft profile: the reference draft passes it, every mutant is caught on exactly its
items, the final-spec references fail exactly the items the final spec contradicts, and the default
profile plans what it planned before the draft existed."""

from __future__ import annotations

import re

import pytest

import rstck.execution.plan
from rstck.cli import main
from rstck.execution.plan import plan
from rstck.reference import targets as final
from rstck.reference.spi_draft import DraftProcessor, DraftPublisher, DraftSubscriber
from rstck.core.checks import UNTESTED, all_checks
from rstck.core.catalog import Catalog, load_catalog
from rstck.execution.runner import run_check
from rstck import InProcessTarget
from rstck.core.verdict import LEVEL_VERDICTS, Verdict

from ..zoo.publisher_mutants import Case
from .mutants import CASES

SPI = "spi-draft"
# The draft items the final spec changed that a check observes: what its references must fail.
CHANGED_AND_CHECKED = {"spi.subscribe.1", "spi.subscribe.2", "spi.subscribe.3", "spi.subscribe.6",
                       "spi.request-more.3", "spi.request-more.4", "spi.on-next.1", "spi.on-next.2",
                       "spi.on-terminal.1", "spi.subscriber.1"}
FINAL_REFERENCES = ["sync_publisher", "threaded_publisher", "asyncio_publisher", "map_processor",
                    "buffered_subscriber", "sync_subscriber"]


def spi_items():
    return [item for item in load_catalog().items if item.spec == SPI]


def checked_items() -> set[str]:
    return {check.rule for check in all_checks() if check.rule.startswith("spi.")}


def draft_references() -> list[InProcessTarget]:
    """Fresh targets of the reference draft publisher, processor and subscriber."""
    processor = InProcessTarget(create_processor=lambda: DraftProcessor(processor.executor),
                                name="reference SPI draft processor")
    subscriber = InProcessTarget(
        create_whitebox_subscriber=lambda observer: DraftSubscriber(subscriber.executor, max_items=5, observer=observer),
        name="reference SPI draft subscriber")
    publisher = InProcessTarget(create_publisher=lambda n: DraftPublisher(range(n)),
                                create_failed_publisher=lambda: DraftPublisher((), error=RuntimeError("on purpose")),
                                name="reference SPI draft publisher")
    return [publisher, processor, subscriber]


def run_profile(target, timeout_s: float = 3.0) -> dict[Verdict, dict[str, list]]:
    """The results of every spi-draft check against `target`, by verdict and by the item charged."""
    found: dict[Verdict, dict[str, list]] = {v: {} for v in Verdict}
    for planned in plan(target, profile=SPI):
        result = run_check(planned.check, planned.target, timeout_s=timeout_s)
        found[result.verdict].setdefault(result.violated or result.rule, []).append(result)
    errors = [r.message for results in found[Verdict.ERROR].values() for r in results]
    assert not errors, "\n\n".join(errors)
    return found


# -- the catalogue ------------------------------------------------------------------------------------

def test_the_catalogue_is_opt_in_and_holds_every_sentence_of_the_draft():
    catalog = load_catalog()
    assert SPI in catalog.opt_in
    assert len(spi_items()) == 46
    assert all(item.id.startswith("spi.") for item in spi_items())
    assert not any(item.id.startswith("spi.") for item in catalog.select(None, "default"))


def test_each_item_says_what_the_final_spec_made_of_it():
    catalog = load_catalog()
    for item in spi_items():
        fates = [f for f in (item.becomes, item.contradicts, item.dropped) if f]
        assert len(fates) == 1, item.id
        for core in filter(None, (item.becomes, item.contradicts)):
            assert catalog[core].spec == "reactive-streams", item.id


def test_every_item_is_checked_or_declared_untested():
    all_checks()
    uncovered = [item.id for item in spi_items() if item.id not in checked_items() and item.id not in UNTESTED]
    assert not uncovered


# -- the default profile --------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["sync_publisher", "buffered_subscriber", "map_processor", "asyncio_publisher"])
def test_the_default_profile_plans_exactly_what_it_planned_before_the_draft(monkeypatch, name):
    target = getattr(final, name)
    now = [planned.id for planned in plan(target)]
    assert now and not any("spi." in planned_id for planned_id in now)
    catalog = load_catalog()
    without_draft = Catalog([i for i in catalog.items if i.spec != SPI])
    checks = [c for c in all_checks() if not c.func.__module__.startswith("rstck.rules.spi_draft")]
    monkeypatch.setattr(rstck.execution.plan, "all_checks", lambda *_profiles: checks)
    monkeypatch.setattr(rstck.execution.plan, "load_catalog", lambda: without_draft)
    assert [planned.id for planned in plan(target)] == now


# -- the reference, the mutants, the final references -------------------------------------------------------

def test_the_reference_draft_implementations_pass_the_profile():
    passed = set()
    for target in draft_references():
        found = run_profile(target)
        assert not found[Verdict.FAIL] and not found[Verdict.WARN] and not found[Verdict.NOT_APPLICABLE]
        passed |= set(found[Verdict.PASS])
    assert passed == checked_items()


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_a_mutant_is_caught_on_exactly_its_items(case: Case):
    found = run_profile(case.target, case.timeout_s)
    assert set(found[Verdict.FAIL]) == case.fails
    assert set(found[Verdict.WARN]) == case.warns
    assert case.unsupported <= set(found[Verdict.UNSUPPORTED])
    assert case.passes <= set(found[Verdict.PASS])


def test_every_checked_item_has_a_mutant_caught_by_its_level():
    caught = {LEVEL_VERDICTS[load_catalog()[i].level]: set() for i in checked_items()}
    for case in CASES:
        for verdict, items in ((Verdict.FAIL, case.fails), (Verdict.WARN, case.warns),
                               (Verdict.UNSUPPORTED, case.unsupported)):
            caught.setdefault(verdict, set()).update(items)
    for item_id in checked_items():
        level_verdict = LEVEL_VERDICTS[load_catalog()[item_id].level]
        assert item_id in caught[level_verdict], f"{item_id}: no mutant gets {level_verdict.value} on it"


@pytest.mark.parametrize("name", FINAL_REFERENCES)
def test_a_final_reference_fails_exactly_the_items_the_final_spec_contradicts(name):
    catalog = load_catalog()
    contradicted = {item.id for item in spi_items() if item.contradicts} & checked_items()
    assert contradicted == CHANGED_AND_CHECKED
    target = getattr(final, name)
    planned = {p.check.rule for p in plan(target, profile=SPI)}
    found = run_profile(target)
    assert set(found[Verdict.FAIL]) == contradicted & planned
    assert not found[Verdict.WARN]
    for item_id, results in found[Verdict.NOT_APPLICABLE].items():
        assert all(r.reason for r in results), item_id
    assert all(catalog[i].level == "MAY" for i in found[Verdict.UNSUPPORTED])
    seen = {i for verdict in found.values() for i in verdict}
    assert seen == planned


# -- the command line and the plugin ----------------------------------------------------------------------------

def test_an_unknown_profile_is_a_one_line_error_naming_the_valid_ones(capsys):
    assert main(["check", "rstck.reference.spi_draft:draft_publisher", "--profile", "draft"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["rstck: --profile: unknown profile 'draft'; valid: default, spi-draft, all"]


def test_draft_ids_outside_their_profile_say_which_profile_has_them(capsys):
    assert main(["check", "rstck.reference.spi_draft:draft_publisher", "--rules", "spi.*"]) == 2
    assert "--profile spi-draft" in capsys.readouterr().err


def test_rules_lists_the_draft_items_with_their_profile_and_fate(capsys):
    assert main(["rules", "--rules", "spi.subscribe.1"]) == 0
    out = capsys.readouterr().out
    assert "(profile spi-draft, opt-in)" in out and "final spec: contradicts 1.9" in out


def test_check_runs_the_profile_and_the_report_names_it(capsys, tmp_path):
    html = tmp_path / "report.html"
    code = main(["check", "rstck.reference.spi_draft:draft_publisher", "--profile", SPI, "--rules", "spi.subscribe.*",
                 "--in-process", "--html", str(html)])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "-- profile spi-draft (opt-in)" in out
    page = html.read_text()
    assert "opt-in profile spi-draft" in page
    assert "final spec: contradicts 1.9" in page and "final spec: became 1.4" in page
    assert "--profile spi-draft --rules spi.subscribe.1" in page


def test_pytest_runs_the_profile_when_asked(pytester):
    result = pytester.runpytest("--rstck-target", "rstck.reference.spi_draft:draft_publisher",
                                "--rstck-profile", SPI, "--strict-markers", "-p", "no:randomly", "-m", "spi_draft")
    result.assert_outcomes(passed=len(plan(draft_references()[0], profile=SPI)))
    bad = pytester.runpytest("--rstck-target", "rstck.reference.spi_draft:draft_publisher", "--rstck-profile", "x")
    assert "unknown profile 'x'; valid: default, spi-draft, all" in bad.stderr.str()


def test_profile_all_runs_both_and_leaves_the_core_verdicts_alone(capsys, tmp_path):
    target = "rstck.reference.targets:sync_publisher"
    main(["check", target, "--rules", "1.9,3.9", "--in-process"])
    core_alone = [line.split() for line in capsys.readouterr().out.splitlines() if line.startswith(("1.9 ", "3.9 "))]
    html = tmp_path / "report.html"
    code = main(["check", target, "--profile", "all", "--rules", "1.9,3.9,spi.*", "--in-process", "--html", str(html)])
    out = capsys.readouterr().out.splitlines()
    assert code == 1  # the final spec's publisher breaks the draft's changed items
    assert [line.split() for line in out if line.startswith(("1.9 ", "3.9 "))] == core_alone
    page = html.read_text()
    assert "Reactive Streams (core profile)" in page and "opt-in profile spi-draft" in page
    for item in spi_items():
        if item.id in {p.check.rule for p in plan(final.sync_publisher, profile=SPI)}:
            assert re.search(rf'<td class="id"[^>]*>{re.escape(item.id)}</td>', page), item.id
            assert f"final spec: {item.final_spec}" in page
