"""The reproducers' parser is safe beside other threads that parse (rstck/reports/repro/parsing.py)."""

from __future__ import annotations

import pytest

from rstck.reports.repro import parsing


def _failing_first(times: int, message: str):
    calls = []

    def parse():
        calls.append(1)
        if len(calls) <= times:
            raise SystemError(message)
        return "tree"

    return parse, calls


def test_a_parse_disturbed_by_another_threads_parse_is_made_again():
    # What CPython 3.11 raises when another thread's parse ran inside ours (measured in a CI run of the suite).
    parse, calls = _failing_first(2, "AST constructor recursion depth mismatch (before=138, after=102)")
    assert parsing._again_on_mismatch(parse) == "tree"
    assert len(calls) == 3


def test_any_other_system_error_and_a_mismatch_that_persists_reach_the_caller():
    parse, calls = _failing_first(1, "unknown opcode")
    with pytest.raises(SystemError, match="unknown opcode"):
        parsing._again_on_mismatch(parse)
    assert len(calls) == 1
    parse, calls = _failing_first(parsing.ATTEMPTS, "AST constructor recursion depth mismatch (before=1, after=2)")
    with pytest.raises(SystemError, match="mismatch"):
        parsing._again_on_mismatch(parse)
    assert len(calls) == parsing.ATTEMPTS


def test_the_trees_and_code_are_the_ones_ast_and_compile_give():
    tree = parsing.parsed("def double(x):\n    return 2 * x\n")
    namespace: dict = {}
    exec(parsing.compiled(tree, "<double>"), namespace)
    assert namespace["double"](21) == 42
