"""The CI templates in ci/: valid YAML, the gate run and its report kept, a command line `rstck check` accepts."""

from __future__ import annotations

import os
import pathlib
import shlex
import subprocess

import pytest
import yaml

from rstck.cli import build_parser

CI = pathlib.Path(__file__).resolve().parent.parent / "ci"
HTML, JUNIT, RESULTS, ALLOW = "rstck-report/index.html", "rstck-report/junit.xml", "rstck-results", \
    "rstck-deviations.toml"
# The templates pass --allow through a bash array only when the deviations file exists.
OPTIONAL_ALLOW = '"${allow[@]}"'


def github_job() -> dict:
    workflow = yaml.safe_load((CI / "github-actions.yml").read_text())
    # PyYAML reads the key `on` as True (YAML 1.1); GitHub reads it as "on".
    assert {"push", "pull_request"} <= set(workflow[True])
    [job] = workflow["jobs"].values()
    return job


def gitlab_job() -> dict:
    return yaml.safe_load((CI / "gitlab-ci.yml").read_text())["rstck-conformance"]


def gate_script(template: str) -> str:
    """The shell script of the step or job that runs `rstck check`."""
    if template == "github-actions.yml":
        scripts = [step["run"] for step in github_job()["steps"] if "run" in step]
    else:
        scripts = gitlab_job()["script"]
    [script] = [script for script in scripts if "rstck check" in script]
    return script


def check_command(script: str) -> str:
    """The `rstck check` line of a script, its backslash continuations joined."""
    lines = iter(script.splitlines())
    for line in lines:
        if line.strip().startswith("rstck check"):
            command = line.strip()
            while command.endswith("\\"):
                command = command[:-1] + " " + next(lines).strip()
            return command
    raise AssertionError(f"no line starts with `rstck check` in:\n{script}")


def covers(paths: list[str], file: str) -> bool:
    """Whether an artifact path (a file, or a directory with or without a trailing slash) holds `file`."""
    return any(file == path.rstrip("/") or file.startswith(path.rstrip("/") + "/") for path in paths)


@pytest.mark.parametrize("template", ["github-actions.yml", "gitlab-ci.yml"])
def test_the_gate_command_is_one_rstck_check_accepts(template):
    command = check_command(gate_script(template))
    assert OPTIONAL_ALLOW in command, "--allow must be passed only when the deviations file exists"
    command = command.replace('"$RSTCK_TARGET"', "mypkg.tck:target").replace(OPTIONAL_ALLOW, f"--allow {ALLOW}")
    try:
        args = build_parser().parse_args(shlex.split(command)[1:])  # after `rstck`
    except SystemExit:  # argparse's reason is in the captured stderr
        pytest.fail(f"`rstck` rejects the gate command of {template}: {command}")
    assert (args.target, args.html, args.junit, args.allow, args.results) == \
        ("mypkg.tck:target", HTML, JUNIT, ALLOW, RESULTS)


def test_github_workflow_uploads_the_report_and_results_even_on_failure():
    uploads = [step for step in github_job()["steps"]
               if step.get("uses", "").startswith("actions/upload-artifact@")
               and step.get("if", "").removeprefix("${{").removesuffix("}}").strip() == "always()"]
    paths = [path.strip() for step in uploads for path in step["with"]["path"].splitlines() if path.strip()]
    assert all(covers(paths, file) for file in (HTML, JUNIT, RESULTS)), paths


def test_gitlab_job_keeps_the_report_and_results_even_on_failure():
    artifacts = gitlab_job()["artifacts"]
    assert artifacts["when"] == "always"
    assert artifacts["reports"]["junit"] == JUNIT
    assert all(covers(artifacts["paths"], file) for file in (HTML, JUNIT, RESULTS)), artifacts["paths"]


@pytest.mark.parametrize("template", ["github-actions.yml", "gitlab-ci.yml"])
@pytest.mark.parametrize("deviations_file", [False, True])
def test_the_gate_passes_allow_only_when_the_deviations_file_exists(tmp_path, template, deviations_file):
    # Run the real script under bash -e (as both CI systems do), with a stand-in `rstck` that prints its arguments.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "rstck").write_text('#!/bin/sh\nprintf "%s\\n" "$@"\n')
    (bin_dir / "rstck").chmod(0o755)
    if deviations_file:
        (tmp_path / ALLOW).write_text("")
    done = subprocess.run(["bash", "-e", "-c", gate_script(template)], cwd=tmp_path, capture_output=True, text=True,
                          env={**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
                               "RSTCK_TARGET": "mypkg.tck:target"})
    assert done.returncode == 0, done.stderr
    args = done.stdout.splitlines()
    assert args[:2] == ["check", "mypkg.tck:target"]
    assert (["--allow", ALLOW] == args[2:4]) is deviations_file, args
