"""A failed item ends with the command that runs it again and the one that writes its reproducer, in `rstck check`'s
output and in pytest's (both styles, docs/pytest.md), exactly runnable from where the user ran the first command;
and a failing pytest run tells the findings other items saw too once, in its summary, not by a warning per item."""

from __future__ import annotations

import re

import pytest

from rstck.cli import build_parser

from .user_project import FILES, make_project, printed_commands, run, words

ITEM = "1.1-on_next_count_never_exceeds_requested"


def test_rstck_check_prints_commands_that_rerun_the_failed_item_and_write_its_reproducer(tmp_path):
    project = make_project(tmp_path)
    first = run("rstck check mypkg.tck:target --no-fuzz", project)
    assert first.returncode == 1, first.stdout + first.stderr
    commands = printed_commands(first.stdout)
    assert commands == {
        "re-run": "rstck check mypkg.tck:target --rules 1.1",
        "write reproducer": "rstck check mypkg.tck:target --rules 1.1 --repro rstck-repro"}, first.stdout
    again = run(commands["re-run"], project)
    assert again.returncode == 1
    assert re.search(r"^1\.1 +MUST +fail", again.stdout, re.M), again.stdout
    written = run(commands["write reproducer"], project)
    assert written.returncode == 1
    assert list((project / "rstck-repro").glob("*.py")), written.stdout + written.stderr
    # A run that writes the reproducers names each script in its summary: no command to write them again.
    assert printed_commands(written.stdout) == {"re-run": commands["re-run"]}, written.stdout
    assert re.search(r"^  1\.1 \(\w+\): python rstck-repro/repro-1\.1-\S+\.py$", written.stdout, re.M), written.stdout


@pytest.fixture
def subclass_run(tmp_path):
    """`pytest test_ticks.py` run from the project's tests folder, the package importable through `pythonpath`."""
    project = make_project(tmp_path, {**FILES, "pytest.ini": "[pytest]\npythonpath = .\n"})
    return project, run("pytest -p no:cacheprovider test_ticks.py", project / "tests")


def test_pytest_prints_commands_relative_to_where_it_ran_for_a_test_class(subclass_run):
    project, first = subclass_run
    assert first.returncode == 1, first.stdout + first.stderr
    commands = printed_commands(first.stdout)
    assert commands["re-run"] == f"pytest test_ticks.py::TestTicks::{ITEM}", first.stdout
    assert commands["write reproducer"] == f"{commands['re-run']} --rstck-repro rstck-repro"
    again = run(commands["re-run"], project / "tests")
    assert again.returncode == 1 and re.search(r"\b1 failed\b", again.stdout), again.stdout
    assert f"FAILED test_ticks.py::TestTicks::{ITEM}" in again.stdout
    written = run(commands["write reproducer"], project / "tests")
    assert written.returncode == 1
    assert list((project / "tests" / "rstck-repro").glob("*.py")), written.stdout + written.stderr


def test_a_failing_pytest_run_tells_the_findings_seen_again_once_in_its_summary(subclass_run):
    _, first = subclass_run
    assert "RstckNote" not in first.stdout and "warnings summary" not in first.stdout, first.stdout
    section = first.stdout.split("rstck: findings more than one item saw", 1)[1].split("\n", 1)[1]
    lines = section.split("\n=", 1)[0].splitlines()
    assert len(lines) == 1, section
    assert lines[0].startswith(f"1.1: failed in tests/test_ticks.py::TestTicks::{ITEM}; found too by ")
    seen = lines[0].split(": ", 3)[-1].split(", ")
    assert "1.3-signals_are_serial" in seen and "fuzz-publisher" in seen and len(seen) >= 19, lines[0]


def test_pytest_prints_a_runnable_node_id_for_a_command_line_target(tmp_path):
    project = make_project(tmp_path, {name: text for name, text in FILES.items() if name.startswith("mypkg/")})
    first = run("python -m pytest -p no:cacheprovider --rstck-target mypkg.tck:target -m 'not fuzz'", project)
    assert first.returncode == 1, first.stdout + first.stderr
    commands = printed_commands(first.stdout)
    assert words(commands["re-run"]) == ["python", "-m", "pytest", f"rstck[mypkg.tck:target]::{ITEM}"], first.stdout
    again = run(commands["re-run"], project)
    assert again.returncode == 1, again.stdout + again.stderr
    assert re.search(r"\b1 failed, \d+ deselected\b", again.stdout), again.stdout
    written = run(commands["write reproducer"], project)
    assert written.returncode == 1
    assert list((project / "rstck-repro").glob("*.py")), written.stdout + written.stderr
    # A run that writes the reproducers names the item's script in its report: no command to write it again.
    assert printed_commands(written.stdout) == {"re-run": commands["re-run"]}, written.stdout
    assert re.search(r"^  reproducer: python rstck-repro/repro-1\.1-\S+\.py$", written.stdout, re.M), written.stdout


@pytest.mark.parametrize(("target", "named"), [
    ("node:./my impl.js", ["node:./my impl.js"]),
    ("client-cmd:./my-client --verbose", ["--client", "./my-client --verbose"]),
    ("tcp://[::1]:9000", ["tcp://[::1]:9000"]),
])
def test_a_target_given_as_a_path_command_or_url_is_quoted_in_the_printed_commands(target, named):
    from rstck.cli.check import _next_steps

    args = build_parser(["check"]).parse_args(["check", target])
    row = {"check": "on_next_count_never_exceeds_requested", "rule": "1.1", "violated": "", "replay": "",
           "loaded_as": target, "spec": "reactive-streams", "evidence": None}
    rerun, reproducer = _next_steps(args, [row])
    assert words(rerun.removeprefix("re-run:")) == ["rstck", "check", *named, "--rules", "1.1"]
    assert reproducer.startswith(("write reproducer:", "no reproducer:"))
    if reproducer.startswith("write"):
        assert words(reproducer.removeprefix("write reproducer:"))[2:] == [*named, "--rules", "1.1", "--repro",
                                                                            "rstck-repro"]
