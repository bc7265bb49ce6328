"""Spark-backed targets get reproducers as in-process targets do: every finding of each Spark mutant
(tests/spark/mutants.py) gets a script that starts a Spark session of its own with pyspark alone (rstck hidden
from it, on the master $RSTCK_SPARK_MASTER names), exits 1 against the mutant naming the broken item, and 0
against the mutant's fixed version.

The checks run in this process, on its one Spark session (as every Spark test's); a script run in a process of its
own starts a JVM of its own, which is what a standalone script costs. So the scripts are written unconfirmed, and
this test makes the run the kit's confirmation would make (against the mutant), and one against the fixed version:
one script's run against its mutant in a process of its own, with pyspark alone, the others in this process, where
the script's getOrCreate() gets the session already running (tests/repro/in_this_process.py)."""

from __future__ import annotations

import dataclasses
import os
import re

import pytest

from rstck.adapters.spark import SparkTarget
from rstck.core.target import load_target
from rstck.reports.repro import write_reproducers

from ..spark.helpers import shared_session
from .helpers import EXIT_BROKEN, EXIT_KEPT, ROOT, RUN_TIMEOUT_S, rows_of, run_script
from .in_this_process import run_here

pytestmark = [pytest.mark.spark, pytest.mark.xdist_group("spark")]

TARGETS = "tests.spark.mutant_targets"


@dataclasses.dataclass(frozen=True)
class Mutant:
    name: str
    fails: frozenset[str]  # the items its checks charge it with, and no others
    fixed: str  # the target of its fixed version
    own_process: bool = False  # its first script's run against it is in a process of its own, rstck hidden


MUTANTS = [
    Mutant("ignores_request_zero", frozenset({"3.9"}), "rows_publisher"),
    Mutant("delivers_one_more", frozenset({"1.1"}), "rows_publisher", own_process=True),
    Mutant("never_requests", frozenset({"2.1"}), "table_sink"),
]


@pytest.fixture(scope="module", autouse=True)
def spark():
    """The session the Spark tests share (tests/spark/helpers.py): the checks' and the in-process scripts'."""
    pytest.importorskip("pyspark", reason="the spark extra is not installed: pip install -e '.[spark]'")
    return shared_session()


@pytest.fixture
def without_rstck(tmp_path):
    """A PYTHONPATH on which `import rstck` fails: what a script may import is the implementation and pyspark."""
    hidden = tmp_path / "hidden" / "rstck"
    hidden.mkdir(parents=True)
    (hidden / "__init__.py").write_text('raise ImportError("a reproducer must not import rstck")\n')
    return f"{hidden.parent}{os.pathsep}{ROOT}"


@pytest.mark.parametrize("mutant", MUTANTS, ids=lambda mutant: mutant.name)
def test_every_finding_of_a_spark_mutant_has_a_standalone_reproducer(mutant, tmp_path, without_rstck):
    pytest.importorskip("pyspark", reason="the spark extra is not installed: pip install -e '.[spark]'")
    rows = rows_of(load_target(f"{TARGETS}:{mutant.name}"), 5.0)
    failed = {row["violated"] or row["rule"] for row in rows if row["verdict"] == "fail"}
    assert failed == mutant.fails and not [row for row in rows if row["verdict"] in ("warn", "error")], \
        [(row["verdict"], row["rule"], row["reason"]) for row in rows if row["verdict"] not in ("pass", "n/a")]
    made = write_reproducers(rows, tmp_path / "repro", confirm=False)
    assert made, "a mutant has findings"
    for number, found in enumerate(made):
        item = found.row["violated"] or found.row["rule"]
        assert found.path is not None, f"{item} ({found.row['check']}): {found.reason}"
        script = found.path.read_text()
        assert "session=spark_session" in script and not re.search(r"^\s*(import|from) rstck\b", script, re.M)
        if mutant.own_process and number == 0:
            # Against the mutant, on the master $RSTCK_SPARK_MASTER names (as rstck's own session honours it).
            broken = run_script(found, env={"PYTHONPATH": without_rstck, "RSTCK_SPARK_MASTER": "local[1]"})
            assert "(a Spark session, local[1], started in" in broken.stdout, broken.stdout[-3000:]
        else:
            broken = run_here(found.path, timeout=RUN_TIMEOUT_S)
        assert broken.returncode == EXIT_BROKEN and f"BROKEN {item}:" in broken.stdout, \
            f"{found.path} against {mutant.name}:\n{broken.stdout[-3000:]}{broken.stderr[-2000:]}"
        kept = run_here(found.path, f"{TARGETS}:{mutant.fixed}", timeout=RUN_TIMEOUT_S)
        assert kept.returncode == EXIT_KEPT, \
            f"{found.path} against {mutant.fixed}:\n{kept.stdout[-3000:]}{kept.stderr[-2000:]}"


# A DataFrame of a row too many, published by the kit's DataFramePublisher (create_dataframe): 1.10 sees the row.
one_more_row = SparkTarget(lambda spark, n: spark.range(n + 1), name="a DataFrame of a row too many")


def test_a_publisher_of_create_dataframe_gets_no_script_and_says_why(tmp_path):
    """Its publisher is the kit's own: a script would need rstck."""
    pytest.importorskip("pyspark", reason="the spark extra is not installed: pip install -e '.[spark]'")
    rows = rows_of(load_target("tests.repro.test_spark:one_more_row"), 5.0, rules="1.10")
    made = write_reproducers(rows, tmp_path, confirm=False)
    assert made and all(found.path is None and "rstck's DataFramePublisher" in found.reason for found in made), \
        [(found.row["rule"], found.reason) for found in made]
