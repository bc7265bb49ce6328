"""The subscriber and processor roles of `rstck check jvm:CLASS`, end to end, on the project's Java references
(tests/jvm/java/Subscribers.java, Processors.java; their mutants: test_jvm_mutants.py), and where a Java subscriber's
request runs."""

from __future__ import annotations

import pytest

from .checking import assert_a_request_inside_on_next_runs_nested, item_verdicts, offending

def verdicts(classes: str, class_name: str, tmp_path, *rules: str) -> dict[str, str]:
    return item_verdicts(classes, class_name, tmp_path, *rules)


@pytest.mark.parametrize("class_name, item", [("Subscribers$Batched", "2.11"), ("Processors$Drain", "4.1")])
def test_the_references_pass_with_no_fail_warn_or_error(java_classes, tmp_path, class_name, item):
    found = verdicts(java_classes, class_name, tmp_path)
    assert found.get(item) == "pass"  # the white box's 2.11, the processor's own 4.1: the role was checked
    assert not {rule: v for rule, v in found.items() if v in ("fail", "warn", "error")}, offending(tmp_path)


def test_a_request_inside_on_next_runs_nested_on_the_java_thread_that_delivered_it(java_classes):
    from rstck.protocols.jvm.process import shared_jvm
    assert_a_request_inside_on_next_runs_nested(shared_jvm([java_classes]))
