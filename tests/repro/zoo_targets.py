"""The in-process zoo's mutants and their fixed counterparts as targets a script loads by MODULE:ATTR (a reproducer
names its target so): one attribute per case of tests/test_zoo.py, built afresh when this module is imported."""

from __future__ import annotations

from tests.test_zoo import CASES

for _case in CASES:
    globals()[_case.name] = _case.target
