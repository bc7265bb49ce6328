"""The CI templates (ci/) as shipped, run as their CI system would run them: each shell step with bash, in a copy of
the sample user project, with the variables the template and the runner set; the steps a CI system does itself
(`uses:` on GitHub, the job's image and artifacts on GitLab) are done here. A user sets two variables, RSTCK_TARGET
and RSTCK_PACKAGE (the wheel `make dist` builds, committed into their repository), and nothing else."""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml

from tests.packaging.user_side import (CONFORMANT, PLANTED_BUG, PLANTED_ITEM, REPOSITORY, SAMPLE_PROJECT, Venv,
                                        failed_items, new_venv)

pytestmark = pytest.mark.xdist_group("packaging")  # the wheel is built once, on one worker

CI = REPOSITORY / "ci"
REPORT, JUNIT, RESULTS = "rstck-report/index.html", "rstck-report/junit.xml", "rstck-results"
GATE_FAILED = 1  # `rstck check`: a MUST item failed


@dataclass
class JobRun:
    succeeded: bool = True
    exit_codes: list[int] = field(default_factory=list)  # of each shell step that ran
    output: str = ""
    kept: list[str] = field(default_factory=list)  # the paths kept as artifacts


def bash(script: str, cwd: Path, env: dict[str, str], run: JobRun) -> None:
    """One shell step, under the options both CI systems give bash: a failing command ends the step."""
    done = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)
    run.exit_codes.append(done.returncode)
    run.output += f"$ {script}\n{done.stdout}{done.stderr}(exit {done.returncode})\n"
    run.succeeded &= done.returncode == 0


def as_strings(variables: dict | None) -> dict[str, str]:
    return {name: str(value) for name, value in (variables or {}).items()}


def run_github_workflow(project: Path, venv: Venv, settings: dict[str, str], runner_temp: Path) -> JobRun:
    workflow = yaml.safe_load((CI / "github-actions.yml").read_text())
    [job] = workflow["jobs"].values()
    env = venv.environment(**{**as_strings(workflow.get("env")), **as_strings(job.get("env")), **settings}, CI="true",
                           GITHUB_ACTIONS="true", GITHUB_WORKSPACE=str(project), RUNNER_TEMP=str(runner_temp),
                           RUNNER_OS="Linux")
    run = JobRun()
    for step in job["steps"]:
        condition = step.get("if", "success()").removeprefix("${{").removesuffix("}}").strip()
        assert condition in ("success()", "always()"), f"a condition this test does not evaluate: {condition}"
        if condition == "success()" and not run.succeeded:
            continue
        action = step.get("uses", "").split("@")[0]
        if "run" in step:
            assert "${{" not in step["run"], "an expression this test does not evaluate"
            bash(step["run"], project / step.get("working-directory", "."), {**env, **as_strings(step.get("env"))},
                 run)
        elif action == "actions/checkout":
            pass  # the project is the copy the test made
        elif action == "actions/setup-python":
            version = tuple(map(int, str(step["with"]["python-version"]).split(".")))
            assert version >= (3, 11), "rstck requires Python 3.11 or later"  # the venv is the interpreter's
        elif action == "actions/upload-artifact":
            run.kept += [path.strip() for path in step["with"]["path"].splitlines() if path.strip()]
        else:
            pytest.fail(f"a step this test does not know how to do: {step}")
    return run


def run_gitlab_job(project: Path, venv: Venv, settings: dict[str, str], builds_dir: Path) -> JobRun:
    pipeline = yaml.safe_load((CI / "gitlab-ci.yml").read_text())
    job = pipeline["rstck-conformance"]
    env = venv.environment(**{**as_strings(pipeline.get("variables")), **as_strings(job.get("variables")), **settings},
                           CI="true", GITLAB_CI="true", CI_PROJECT_DIR=str(project), CI_BUILDS_DIR=str(builds_dir))
    run = JobRun()
    bash("\n".join([*job.get("before_script", []), *job["script"]]), project, env, run)
    if run.succeeded or job["artifacts"].get("when") == "always":
        run.kept += job["artifacts"]["paths"]
    assert job["artifacts"]["reports"]["junit"] == JUNIT
    return run


RUNNERS = {"github-actions.yml": run_github_workflow, "gitlab-ci.yml": run_gitlab_job}


@pytest.fixture(scope="module", params=[pytest.param(name, marks=[pytest.mark.soak] if name != "github-actions.yml" else [])
                                        for name in sorted(RUNNERS)])
def template_venv(request, wheelhouse, tmp_path_factory) -> tuple[str, Venv]:
    """Each template installs into a fresh venv of its own (as the runner's fresh Python would be), which both of
    its runs share: the second run's installs find everything there. The suite runs the GitHub template; the soak
    runs the GitLab one as well (the same steps, another runner's variables)."""
    return request.param, new_venv(tmp_path_factory.mktemp("runner") / "venv", wheelhouse)


@pytest.mark.parametrize("target, gate_passes", [(CONFORMANT, True), (PLANTED_BUG, False)])
def test_the_template_as_shipped_gates_the_users_target(template_venv, distribution, tmp_path, target, gate_passes):
    """A template's first run installs rstck's requirements into its fresh venv and builds the project's editable
    install: on the 2-core machine 3.7 s under a load average of 4, 14 s under 7 to 12 (its second run, whose
    install finds rstck there, 2.6 s and 8-11 s)."""
    template, venv = template_venv
    project = Path(shutil.copytree(SAMPLE_PROJECT, tmp_path / "project"))
    wheel = project / "ci" / distribution.wheel.name  # as the user commits it, with `make dist`'s name
    wheel.parent.mkdir()
    shutil.copy2(distribution.wheel, wheel)
    settings = {"RSTCK_PACKAGE": f"./{wheel.relative_to(project)}", "RSTCK_TARGET": target}
    if target == CONFORMANT:
        del settings["RSTCK_TARGET"]  # the templates' example target is the sample project's
    (tmp_path / "temp").mkdir()
    run = RUNNERS[template](project, venv, settings, tmp_path / "temp")

    assert run.succeeded is gate_passes, run.output
    if not gate_passes:
        assert run.exit_codes[-1] == GATE_FAILED and set(run.exit_codes[:-1]) <= {0}, run.output
    for artifact in (REPORT, JUNIT, RESULTS):
        assert (project / artifact).exists(), f"{artifact} not written\n{run.output}"
        assert any(artifact == kept.rstrip("/") or artifact.startswith(kept.rstrip("/") + "/") for kept in run.kept)
    assert list((project / RESULTS).glob("*.jsonl"))
    assert failed_items(project / JUNIT) == (set() if gate_passes else {PLANTED_ITEM})
