"""The evidence a failing row carries (rstck/core/evidence.py): the kit's operations as data, in order, and how the
broken sentence is observed again; what a script cannot write out is said instead."""

from __future__ import annotations

from rstck.core.evidence import importable_name
from rstck.core.target import load_target

from .helpers import rows_of


def test_a_finding_carries_the_kits_operations_and_its_claim():
    (row,) = [row for row in rows_of(load_target("docs.examples.lenient_range:target"), 5.0, rules="3.9")
              if row["check"] == "request_zero_signals_on_error"]
    evidence = row["evidence"]
    assert [(op["op"], op.get("n")) for op in evidence["ops"]] == [
        ("make", None), ("subscribe", None), ("request", 0), ("settle", None), ("expect", None)]
    assert evidence["ops"][0] == {"op": "make", "name": "publisher1", "factory": "create_publisher", "args": [10],
                                  "importable": "docs.examples.lenient_range:LenientRange", "at": 1}
    assert evidence["ops"][-1]["error_type"] == "ValueError"
    assert evidence["claim"] == {"by": "expectation", "rule": "3.9"}
    assert evidence["objects"]["probe1"]["kind"] == "probe"


def test_a_reaction_made_in_every_signal_is_described_not_replayed():
    (row,) = [row for row in rows_of(load_target("tests.repro.zoo_targets:recursive_delivery"), 1.5, rules="3.3")
              if row["verdict"] == "fail"]
    evidence = row["evidence"]
    assert evidence["objects"]["probe1"]["repeats"] == {"on_next": {"requests": [1], "while_below": None}}
    assert not [op for op in evidence["ops"] if "inside" in op]
    assert evidence["claim"]["claim"] == "bounded_recursion"


def test_a_passing_check_carries_no_evidence():
    rows = rows_of(load_target("docs.examples.lenient_range:fixed"), 5.0, rules="3.9")
    assert rows and all(row["evidence"] is None for row in rows)


def test_only_a_factory_a_script_can_import_by_its_own_name_is_named():
    assert importable_name(load_target) == "rstck.core.target:load_target"
    assert importable_name(lambda n: n) is None
    assert importable_name(None) is None
