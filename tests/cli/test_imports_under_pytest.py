"""In a user's project whose tests import its package, `python -m pytest tests` finds the package and plain
`pytest tests` does not (only `python -m` puts the current directory on sys.path): the collection error says so and
what to do, and doing it works; a --rstck-target the plugin cannot import says where the package is."""

from __future__ import annotations

from .user_project import FILES, make_project, run


def test_a_test_module_that_cannot_import_the_users_package_says_what_to_do(tmp_path):
    project = make_project(tmp_path)
    plain = run("pytest -p no:cacheprovider --collect-only -q tests", project)
    assert plain.returncode == 2, plain.stdout + plain.stderr
    assert "No module named 'mypkg'" in plain.stdout
    hint = next((line for line in plain.stdout.splitlines() if line.startswith("rstck: mypkg is in ")), "")
    assert hint == (f"rstck: mypkg is in {project}, which is not on sys.path: plain `pytest` does not put the "
                    "current directory there. Run `python -m pytest` instead of `pytest` (it puts the current "
                    f"directory on sys.path); or write a pytest.ini in {project} with a [pytest] section holding "
                    "`pythonpath = .`, or install the package (pip install -e .)."), plain.stdout
    assert run("python -m pytest -p no:cacheprovider --collect-only -q tests", project).returncode == 0
    (project / "pytest.ini").write_text("[pytest]\npythonpath = .\n", encoding="utf-8")
    assert run("pytest -p no:cacheprovider --collect-only -q tests", project).returncode == 0


def test_a_command_line_target_the_plugin_cannot_import_says_where_the_package_is(tmp_path):
    project = make_project(tmp_path, {name: text for name, text in FILES.items() if name.startswith("mypkg/")})
    (project / "elsewhere").mkdir()
    done = run("pytest -p no:cacheprovider --rstck-target mypkg.tck:target", project / "elsewhere")
    assert done.returncode == 4, done.stdout + done.stderr
    assert (f"ERROR: --rstck-target: target 'mypkg.tck:target': cannot import 'mypkg.tck' (No module named 'mypkg') "
            f"from the current directory ({project / 'elsewhere'}) or the installed packages: run from the directory "
            "that holds mypkg") in done.stderr, done.stderr
    assert f"rstck: mypkg is in {project}, which is not on sys.path: pytest ran elsewhere. Run pytest from " \
           f"{project}" in done.stderr, done.stderr
