"""The catalogue and the checks agree: every item is covered or declared untested, and every
check names a real item."""

from __future__ import annotations

import re

from rstck.core.checks import UNTESTED, all_checks
from rstck.core.catalog import load_catalog
from rstck.core.verdict import LEVEL_VERDICTS

# The 43 rules of the spec, in its order: 1.1-1.11, 2.1-2.13, 3.1-3.17, 4.1-4.2.
SPEC_RULES = [f"{section}.{n}" for section, count in ((1, 11), (2, 13), (3, 17), (4, 2))
              for n in range(1, count + 1)]

# Items whose checks are still being written; each must be covered or declared untested once
# its checks land. Empty this set then.

SPEC_RULE_ID = re.compile(r"^\d+\.\d+$")


def _checked_ids() -> set[str]:
    return {check.rule for check in all_checks()}


def test_the_catalogue_holds_every_rule_of_the_spec_in_order():
    ids = [item.id for item in load_catalog().items if SPEC_RULE_ID.match(item.id)]
    assert ids == SPEC_RULES


def test_item_ids_are_unique():
    ids = [item.id for item in load_catalog().items]
    assert len(ids) == len(set(ids))


def test_every_item_has_a_known_level_and_a_text():
    for item in load_catalog().items:
        assert item.level in LEVEL_VERDICTS, item.id
        assert item.text.strip(), item.id
        assert item.section.strip(), item.id


def test_a_sub_item_extends_the_id_of_an_existing_parent():
    catalog = load_catalog()
    for item in catalog.items:
        if item.parent:
            assert item.parent in catalog, item.id
            assert item.id.startswith(item.parent + "."), item.id


def test_every_check_names_a_catalogue_item():
    catalog = load_catalog()
    checks = all_checks()  # raises on an unknown id
    assert checks
    for check in checks:
        assert check.rule in catalog, check.id


def test_check_ids_are_unique():
    ids = [check.id for check in all_checks()]
    assert len(ids) == len(set(ids))


def test_every_untested_entry_names_an_item_gives_a_reason_and_has_no_check():
    catalog = load_catalog()
    all_checks()  # rule modules declare their untested items when imported
    checked = _checked_ids()
    for rule_id, reason in UNTESTED.items():
        assert rule_id in catalog, rule_id
        assert reason.strip(), rule_id
        assert rule_id not in checked, f"{rule_id} has checks and is declared untested"


def test_every_item_is_covered_or_declared_untested():
    catalog = load_catalog()
    accounted = _checked_ids() | set(UNTESTED)
    uncovered = [item.id for item in catalog.items if item.id not in accounted]
    assert not uncovered, f"no check and no untested reason: {', '.join(uncovered)}"


def test_most_publisher_and_subscription_rules_are_executable():
    publisher_and_subscription = [r for r in SPEC_RULES if r.startswith(("1.", "3."))]
    executable = [r for r in publisher_and_subscription if r in _checked_ids()]
    assert len(executable) >= 26, f"executable: {executable}"
