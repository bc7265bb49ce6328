"""benchmarks/mutation_power.py keeps working: on a tiny sample it prints every figure, kills a mutant
any rule observes (a publisher that completes before it has sent its elements), and counts a recorded
equivalent mutant as such; and every recorded equivalent mutant still names code of the zoo."""

from __future__ import annotations

import ast
import importlib.util
import subprocess
import sys
import tomllib
from pathlib import Path

from rstck.reports.repro.parsing import parsed

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "benchmarks" / "mutation_power.py"
EQUIVALENTS = ROOT / "benchmarks" / "equivalent_mutants.toml"
# `elif self._sent == self._n:` -> `!=`: on_complete before the elements; in three publishers of the zoo.
COMPLETES_EARLY = r"_Eq_NotEq: 'elif self._sent == self._n:'"


def test_prints_the_figures_and_kills_an_observable_mutant(tmp_path):
    recorded = tmp_path / "equivalents.toml"
    recorded.write_text('[[mutant]]\nfile = "tests/conformant/publishers.py"\nwhere = "_AsyncioSubscription._deliver"\n'
                        'operator = "core/ReplaceComparisonOperator_Eq_NotEq"\nbefore = "elif self._sent == self._n:"\n'
                        'after = "elif self._sent != self._n:"\nreason = "recorded by this test"\n')
    done = subprocess.run([sys.executable, str(SCRIPT), "--module", "publishers", "--match", COMPLETES_EARLY,
                           "--limit", "3", "--no-fuzz", "--equivalents", str(recorded), "--keep", str(tmp_path)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    figures = dict(line.split(": ", 1) for line in done.stdout.splitlines()[-8:] if ": " in line)
    assert figures["mutants"] == "3" and figures["equivalent"] == "1", done.stdout
    assert figures["killed"] == "2" and figures["survived"] == "0" and figures["timed out"] == "0", done.stdout
    assert figures["kill ratio (--no-fuzz)"].startswith("100.0% of 2 non-equivalent"), done.stdout
    assert "time" in figures and figures["baseline"].endswith("unmutated targets"), done.stdout
    assert "killed by re_raising" in done.stdout and "killed by sync_trampolined" in done.stdout, done.stdout

    again = subprocess.run([sys.executable, str(SCRIPT), "--recount", str(tmp_path), "--equivalents", str(recorded)],
                           cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert again.returncode == 0 and "equivalent: 1" in again.stdout and "killed: 2" in again.stdout, again.stdout


def test_a_should_only_mutant_stays_out_of_the_ratio_and_says_whether_it_was_warned(tmp_path):
    # After a cancel inside on_next the loop counts on through the demand without signalling: 3.4 (SHOULD) alone.
    recorded = tmp_path / "equivalents.toml"
    recorded.write_text('[[mutant]]\nfile = "tests/conformant/publishers.py"\nwhere = "_TrampolinedSubscription.cancel"\n'
                        'operator = "core/ReplaceTrueWithFalse"\nbefore = "self._done = True"\n'
                        'after = "self._done = False"\nshould = "3.4"\nreason = "recorded by this test"\n')
    line = _line_in(ROOT / "tests/conformant/publishers.py", "_TrampolinedSubscription", "cancel", "self._done = True")
    done = subprocess.run([sys.executable, str(SCRIPT), "--module", "publishers", "--match",
                           rf"publishers\.py:{line} core/ReplaceTrueWithFalse", "--no-fuzz",
                           "--equivalents", str(recorded)], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    figures = dict(line.split(": ", 1) for line in done.stdout.splitlines()[-9:] if ": " in line)
    assert figures["mutants"] == "1" and figures["killed"] == "0" and figures["survived"] == "0", done.stdout
    assert figures["SHOULD-only (no MUST broken; not in the ratio)"] == "1, warned on their item: 0", done.stdout
    assert figures["kill ratio (--no-fuzz)"] == "n/a of 0 non-equivalent", done.stdout
    assert "  not warned: tests/conformant/publishers.py:" in done.stdout, done.stdout


def _line_in(path: Path, class_name: str, method: str, text: str) -> int:
    """The number of the line reading `text` inside `class_name.method`: the benchmark's --match names lines."""
    tree = parsed(path.read_text())
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == class_name)
    function = next(n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == method)
    lines = path.read_text().splitlines()
    return next(i for i in range(function.lineno, function.end_lineno + 1) if lines[i - 1].strip() == text)


def _definitions(tree: ast.Module) -> set[str]:
    found = set()

    def visit(body, prefix):
        for node in body:
            if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                found.add(prefix + node.name)
                visit(node.body, prefix + node.name + ".")

    visit(tree.body, "")
    return found | {"<module>"}


def test_every_recorded_equivalent_mutant_names_code_of_the_zoo():
    entries = tomllib.loads(EQUIVALENTS.read_text())["mutant"]
    for entry in entries:
        source = (ROOT / entry["file"]).read_text()
        assert entry["where"] in _definitions(parsed(source)), entry
        lines = [line.strip() for line in source.splitlines()]
        assert entry["before"].split(" / ")[0] in lines, entry
        assert entry["operator"].startswith("core/") and entry["after"] != entry["before"], entry
        assert len(entry["reason"]) > 20, entry


def test_only_annotations_that_are_never_evaluated_count_as_equivalent():
    spec = importlib.util.spec_from_file_location("mutation_power", SCRIPT)
    script = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(spec.name, script)  # its dataclasses look their module up there
    spec.loader.exec_module(script)
    body = "def total(self, n: int | None = None) -> int | None:\n    return n | 1\n"
    lazy = script._annotation_spans(parsed("from __future__ import annotations\n" + body))
    assert [(start[0], end[0]) for start, end in lazy] == [(2, 2), (2, 2)]
    assert not any(start <= (3, 11) <= end for start, end in lazy)  # `n | 1` is code, not an annotation
    assert script._annotation_spans(parsed(body)) == []  # evaluated at definition time
