"""Python source to syntax trees, safe beside other threads that parse.

CPython 3.11 counts the depth of the syntax tree it builds or compiles in one counter per interpreter, shared by
every thread; a parse in another thread (Hypothesis describing a rule of a fuzz run in the background, say) that
runs while ours is building makes ours fail with "SystemError: AST constructor recursion depth mismatch" although
the source is fine (python/cpython#106905 and the issues beside it; 3.12 keeps the counter per call). The counter
is reset at the start of every parse, so parsing again gives the right tree.
"""

from __future__ import annotations

import ast
from types import CodeType

ATTEMPTS = 5
_SHARED_COUNTER_MISMATCH = "recursion depth mismatch"


def parsed(source: str) -> ast.Module:
    """ast.parse(source), again while another thread's parse disturbs the shared depth counter."""
    return _again_on_mismatch(lambda: ast.parse(source))


def compiled(tree: ast.Module, filename: str) -> CodeType:
    """compile(tree, filename, "exec"), again while another thread's parse disturbs the shared depth counter."""
    return _again_on_mismatch(lambda: compile(tree, filename, "exec"))


def _again_on_mismatch(parse):
    for attempt in range(ATTEMPTS):
        try:
            return parse()
        except SystemError as error:
            if _SHARED_COUNTER_MISMATCH not in str(error) or attempt == ATTEMPTS - 1:
                raise
    raise AssertionError("unreachable")
