"""rstck as a user gets it: the wheel and sdist `make dist` builds, the wheel installed with no extras in a venv of
its own, run from a user's project outside the repository: `rstck --version`, the gate, and the pytest plugin in both
of its styles (docs/pytest.md), on a conformant target and on one with a bug planted."""

from __future__ import annotations

import email.parser
import re
import subprocess
import tarfile
import zipfile

import pytest

import rstck
from tests.packaging.user_side import CONFORMANT, PLANTED_BUG, PLANTED_ITEM, REPOSITORY, completed, failed_items

pytestmark = pytest.mark.xdist_group("packaging")  # one worker builds the wheel and its venv once

# The requirements of the plugin itself: the kit's own test tools (pytest-xdist, its pins) are not a user's.
RUNTIME_REQUIREMENTS = {"pytest", "hypothesis", "jinja2", "msgpack"}


def wheel_metadata(wheel) -> email.message.Message:
    with zipfile.ZipFile(wheel) as archive:
        [metadata] = [name for name in archive.namelist() if name.endswith(".dist-info/METADATA")]
        return email.parser.Parser().parsestr(archive.read(metadata).decode())


def test_make_dist_builds_without_a_warning(distribution):
    warnings = [line for line in distribution.build_output.splitlines() if "warn" in line.lower()]
    assert not warnings, distribution.build_output


def test_the_sdist_carries_the_docs_the_readme_the_license_and_the_changelog(distribution):
    with tarfile.open(distribution.sdist) as sdist:
        carried = {name.split("/", 1)[1] for name in sdist.getnames() if "/" in name}  # below rstck-X.Y.Z/
    docs = {str(path.relative_to(REPOSITORY)) for path in (REPOSITORY / "docs").rglob("*")
            if path.is_file() and "__pycache__" not in path.parts}
    assert docs and not (docs | {"README.md", "LICENSE", "CHANGELOG.md"}) - carried


def test_the_wheel_carries_the_license_and_requires_only_what_the_plugin_needs(distribution):
    with zipfile.ZipFile(distribution.wheel) as archive:
        assert any(name.endswith(".dist-info/licenses/LICENSE") for name in archive.namelist())
    metadata = wheel_metadata(distribution.wheel)
    assert (metadata["Version"], metadata["License-Expression"]) == (rstck.__version__, "MIT")
    required = [requirement for requirement in metadata.get_all("Requires-Dist") if "extra ==" not in requirement]
    assert {re.match(r"[\w.-]+", requirement)[0].lower() for requirement in required} == RUNTIME_REQUIREMENTS
    assert not [requirement for requirement in required if "<" in requirement], "a user's own pytest is held back"


def test_rstck_version_names_the_installed_version(installed_kit, tmp_path):
    done = installed_kit.run("rstck", "--version", cwd=tmp_path)
    assert (done.returncode, done.stdout) == (0, f"rstck {rstck.__version__}\n"), completed(done)
    where = installed_kit.run("python", "-c", "import rstck; print(rstck.__file__)", cwd=tmp_path)
    assert where.stdout.startswith(str(installed_kit.path)), completed(where)  # the wheel's, not the clone's


@pytest.mark.parametrize("target, exit_code, failed", [(CONFORMANT, 0, set()), (PLANTED_BUG, 1, {PLANTED_ITEM})])
def test_rstck_check_gates_a_users_target(installed_kit, user_project, target, exit_code, failed):
    done = installed_kit.run("rstck", "check", target, "--junit", "junit.xml", cwd=user_project)
    assert done.returncode == exit_code, completed(done)
    assert failed_items(user_project / "junit.xml") == failed
    assert bool(re.search(rf"^{re.escape(PLANTED_ITEM)}\s+MUST\s+fail\b", done.stdout, re.MULTILINE)) == \
        bool(failed), done.stdout


@pytest.mark.parametrize("target, subclass_tests, exit_code", [
    (CONFORMANT, "tests/test_conformance.py", 0),
    (PLANTED_BUG, "tests/test_planted_bug.py", 1),
])
def test_the_pytest_plugin_in_both_styles(installed_kit, user_project, target, subclass_tests, exit_code):
    """`python -m pytest --rstck-target MODULE:ATTR` and a `rstck.PublisherVerification` subclass in the user's
    tests, in one run (one pytest start, the fuzz items of both: 2.8-9 s): each style fails the planted bug's item, and
    only that."""
    done = installed_kit.run("python", "-m", "pytest", "--rstck-target", target, subclass_tests, "-q", "-rfE",
                             cwd=user_project)
    assert done.returncode == exit_code, completed(done)
    failed = {line.split()[1] for line in done.stdout.splitlines() if line.startswith(("FAILED ", "ERROR "))}
    planted = {f"rstck[{target}]::3.9-request_zero_signals_on_error",
               f"{subclass_tests}::TestLenientRangePublisher::3.9-request_zero_signals_on_error"}
    assert failed == (planted if exit_code else set()), done.stdout
    passed = re.search(r"(\d+) passed", done.stdout)
    assert passed and int(passed[1]) > 80, done.stdout  # both styles ran every check of a publisher


def test_make_check_installs_only_what_checking_needs():
    """`make check` once installed the development extras (pyspark, cosmic-ray, selenium, import-linter: about two
    minutes on a new clone) to run a check: it installs the kit with its spark extra, which the Spark references
    need, and `make test` the development extra."""
    def installs(goal: str) -> list[str]:
        done = subprocess.run(["make", "-n", "-B", goal], cwd=REPOSITORY, capture_output=True, text=True, check=True)
        return re.findall(r'pip install .*?-e "\.\[(\w+)\]"', done.stdout)

    assert installs("check") == ["spark"]
    assert installs("test") == ["dev"]
