"""A profile and an adapter from a package of their own (tests/plugins/echo_kit), installed beside rstck as a
third party's would be: they show in `rstck rules`, `rstck check`, the pytest markers and items, and the HTML
report, with no edit to rstck."""

from __future__ import annotations

import html
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

ECHO_KIT = pathlib.Path(__file__).parent / "plugins" / "echo_kit"


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> dict[str, str]:
    """The environment of a Python that has rstck and the echo kit installed (in a directory of its own, so the
    suite's own environment stays without it)."""
    site = tmp_path_factory.mktemp("echo-kit-site")
    source = tmp_path_factory.mktemp("echo-kit-source") / "echo_kit"  # the build writes beside its sources
    shutil.copytree(ECHO_KIT, source, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    done = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
                           "--no-index", "--target", str(site), str(source)], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)}


def run(env: dict[str, str], *args: str, cwd: pathlib.Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], env=env, capture_output=True, text=True, timeout=300, cwd=cwd)


def test_the_profile_is_listed_with_the_catalogue(installed):
    listed = run(installed, "-m", "rstck", "rules", "--rules", "echo.*")
    assert listed.returncode == 0, listed.stderr
    assert "echo.1" in listed.stdout and "An echo service MUST answer each line with the same line." in listed.stdout
    assert "echo.2" in listed.stdout and "a_line_comes_back_unchanged" in listed.stdout


def test_rstck_check_loads_the_adapters_targets_and_judges_them(installed):
    faithful = run(installed, "-m", "rstck", "check", "echo:echo_kit.services:faithful")
    assert faithful.returncode == 0, faithful.stdout + faithful.stderr
    assert "2 pass" in faithful.stdout
    shouting = run(installed, "-m", "rstck", "check", "echo:echo_kit.services:shouting")
    assert shouting.returncode == 1, shouting.stdout + shouting.stderr
    assert "echo.1 MUST: An echo service MUST answer each line with the same line." in shouting.stdout
    assert "observed: 'HELLO, ECHO'" in shouting.stdout
    padding = run(installed, "-m", "rstck", "check", "echo:echo_kit.services:padding")
    assert padding.returncode == 0, padding.stdout + padding.stderr  # a SHOULD not met warns
    assert "warn" in padding.stdout
    help_text = run(installed, "-m", "rstck", "check", "--help").stdout
    assert "echo:MODULE:FUNCTION for an echo service" in help_text


def test_pytest_registers_the_profiles_markers_and_runs_its_checks(installed, tmp_path):
    markers = run(installed, "-m", "pytest", "--markers", cwd=tmp_path)
    assert "@pytest.mark.echo: checks of the echo protocol's items (echo.*)" in markers.stdout
    items = run(installed, "-m", "pytest", "-p", "no:randomly", "-p", "no:cacheprovider", "--strict-markers",
                "--rstck-target", "echo:echo_kit.services:shouting", "-m", "echo", "-q", cwd=tmp_path)
    assert items.returncode == 1, items.stdout + items.stderr
    assert "1 failed, 1 passed" in items.stdout
    assert "echo.1-a_line_comes_back_unchanged" in items.stdout


def test_the_html_report_titles_the_profile_and_names_the_target_as_its_adapter_does(installed, tmp_path):
    report = tmp_path / "report.html"
    run(installed, "-m", "rstck", "check", "echo:echo_kit.services:shouting", "--html", str(report))
    page = html.unescape(report.read_text(encoding="utf-8"))
    assert "Echo protocol (an example profile from outside rstck)" in page
    assert "rstck check echo:echo_kit.services:shouting --rules echo.1" in page


def test_the_adapter_names_its_reproducer_language_and_the_profile_whether_scripts_judge_its_items(installed, tmp_path):
    """The reproducer language of a target comes from its adapter's description, whether a script judges an item
    from its profile's: the echo adapter says Python, the echo profile names no language, so a finding gets no
    script, for want of one that judges its items, not of a language for its target."""
    asked = run(installed, "-c", "from rstck.reports.repro import language_of; "
                "print(language_of('echo:echo_kit.services:shouting'))")
    assert asked.stdout.split() == ["python"], asked.stdout + asked.stderr
    checked = run(installed, "-m", "rstck", "check", "echo:echo_kit.services:shouting", "--repro",
                  str(tmp_path / "repro"), cwd=tmp_path)
    assert checked.returncode == 1, checked.stdout + checked.stderr
    assert "reproducers: 0 of 1 finding written" in checked.stdout, checked.stdout
    assert "none, reproducers of the echo-protocol profile's items are not written yet" in checked.stdout


def test_the_plugins_exports_are_names_of_rstck(installed):
    """`rstck.NAME` resolves the names a plug-in exports (Adapter.exports), the kit's own shipped ones included."""
    asked = run(installed, "-c", "import rstck; print(rstck.EchoTarget.__module__, rstck.InProcessTarget.__module__, "
                "rstck.DraftNames.__module__, 'EchoTarget' in dir(rstck))")
    assert asked.stdout.split() == ["echo_kit.adapter", "rstck.adapters.inprocess.target",
                                    "rstck.rules.spi_draft.names", "True"], asked.stdout + asked.stderr


def test_fuzz_findings_are_items_of_the_profile_that_claims_the_fuzzed_role():
    """The fuzzer's rows name the spec of the profile whose `fuzzed_roles` hold the role, not a spec it writes."""
    from rstck.core.plugins import profile_fuzzed_as, profiles
    from rstck.fuzz.report import spec_fuzzed_as

    for role in ("publisher", "subscriber", "processor"):
        claiming = [profile.name for profile in profiles() if role in profile.fuzzed_roles]
        assert claiming == [profile_fuzzed_as(role).name] == [spec_fuzzed_as(role)] == ["reactive-streams"]
