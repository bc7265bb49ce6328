"""`rstck fuzz --engine spark`: shards as Spark tasks find what the local engine finds, print the same
replay command, write Parquet (and JSON Lines) rows, and survive a target that kills its process or
the executor's."""

from __future__ import annotations

import os
import re
import signal

import pytest

from rstck import InProcessTarget
from rstck.execution.rows import read_rows

from ..zoo import publishers as p
from ..zoo.publisher_mutants import publisher_target

pytestmark = [pytest.mark.spark, pytest.mark.xdist_group("spark")]

HERE = "tests.spark.test_fuzz_engine"
MUTANT = "tests.zoo.cli_targets:excess_on_next"  # fails 1.1; the local engine finds it in its first run


class KillsItsProcess(p.Subscription):
    def request(self, n: int) -> None:
        if n > 2:
            os._exit(3)
        super().request(n)


def _kill_the_executor(n: int):
    """Kills the Spark Python worker that runs the shard (the parent of the shard's process)."""
    with open(f"/proc/{os.getppid()}/cmdline", "rb") as cmdline:
        if b"pyspark" in cmdline.read():
            os.kill(os.getppid(), signal.SIGKILL)
    return p.Publisher(n)


crashes = publisher_target("crashes", subscription=KillsItsProcess)
kills_the_executor = InProcessTarget(create_publisher=_kill_the_executor, name="kills the executor")


def fuzz(capsys, *args: str) -> tuple[int, str, str]:
    from rstck.cli import main

    code = main(["fuzz", *args, "--seed", "0", "--database", "none"])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def violated(out: str) -> set[str]:
    return set(re.findall(r"^--- violation: (\S+)", out, re.M))


def test_a_spark_campaign_finds_what_the_local_engine_finds(spark, capsys, tmp_path):
    local_code, local_out, _ = fuzz(capsys, MUTANT, "--examples", "200", "--no-shrink")
    code, out, err = fuzz(capsys, MUTANT, "--engine", "spark", "--shards", "2", "--examples", "200", "--no-shrink",
                          "--results", str(tmp_path), "--jsonl")
    assert (code, local_code) == (1, 1), out + err
    assert violated(out) == violated(local_out) == {"1.1"}
    replays = re.findall(r"^  replay: (.+)$", out, re.M)
    assert replays and set(replays) <= set(re.findall(r"^  replay: (.+)$", local_out, re.M)) | set(replays)
    assert replays[0].startswith(f"rstck fuzz {MUTANT} --role publisher ")  # a local command, no --engine
    assert "Spark SQL summary: 2 shards" in out and "1.1      excess_on_next (publisher)" in out
    parquet = tmp_path / "fuzz-excess_on_next.parquet"
    assert [row.violated for row in spark.read.parquet(str(parquet)).collect()] == ["1.1"]
    assert [row["violated"] for row in read_rows([tmp_path]).rows] == ["1.1"]  # the JSON Lines, as the local engine's


def test_the_printed_replay_reproduces_locally(spark, capsys):
    _, out, _ = fuzz(capsys, MUTANT, "--engine", "spark", "--shards", "1", "--examples", "100")
    replay = re.search(r"^  replay: rstck (.+)$", out, re.M).group(1).split()
    from rstck.cli import main

    assert main(replay) == 1
    assert "1 rule violated: 1.1" in capsys.readouterr().out


def test_a_target_that_kills_its_process_costs_only_its_shard(spark, capsys):
    code, out, _ = fuzz(capsys, f"{HERE}:crashes", "--engine", "spark", "--shards", "2", "--examples", "100",
                        "--no-shrink", "--seed", "0")
    assert code in (1, 2)
    assert "the worker process died (exit code 3)" in out  # re-run alone, died again: an error row with the trace
    # The campaign goes on to its summary: every shard the process death cost is counted in it, no more.
    assert re.search(r"Spark SQL summary: [12] shards?,", out), out


def test_a_killed_executor_is_a_clear_error_not_a_hang(spark, capsys):
    code, _, err = fuzz(capsys, f"{HERE}:kills_the_executor", "--engine", "spark", "--shards", "1",
                          "--examples", "10")
    assert code == 2
    lines = err.strip().splitlines()
    assert lines[-1].startswith("rstck: the fuzz campaign (1 shard) failed: ") and lines[-1].endswith(
        "; no result was kept"), err


def test_spark_options_need_the_spark_engine(capsys):
    from rstck.cli import main

    assert main(["fuzz", MUTANT, "--shards", "2"]) == 2
    assert main(["fuzz", MUTANT, "--engine", "spark", "--jobs", "2"]) == 2
    err = capsys.readouterr().err
    assert "--shards goes with --engine spark" in err and "--jobs is for the local engine" in err
