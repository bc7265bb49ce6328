"""Detection power as a figure: how many mutants of conformant implementations `rstck check` kills.

    python benchmarks/mutation_power.py [--module NAME ...] [--limit N] [--seed S] [--jobs J]
                                        [--no-fuzz] [--match REGEX] [--timeout S] [--keep DIR]
    python benchmarks/mutation_power.py --recount DIR

The mutants are cosmic-ray's (the `dev` extra): every mutation its operators make in the modules of
independent conformant implementations (`tests/conformant/*.py`, the core profile, and the network
protocol's servers in `tests/network/conformant_servers/`). Each mutant is written into a private copy
of the zoos (the working tree is never touched), and `rstck check` runs, as a user runs it, against
every target that can reach the mutated code (`tests.conformant.targets:NAME`, or a mutated server
started on a free port); the first check that exits non-zero kills the mutant. Printed at the end: mutants, equivalent (read from
benchmarks/equivalent_mutants.toml), SHOULD-only (recorded there with the SHOULD item they break: run, out
of the ratio, and counted as warned or not), killed, survived, timed out, the kill ratio of the
non-equivalent mutants, the time taken, and the baseline (one check of every unmutated target the run
reaches).

Two figures in one run: each mutant is first checked with `--no-fuzz`; one that survives that is
checked again as the default `rstck check` (the same checks, then the fuzz phase). `--no-fuzz` stops
after the first figure. See docs/detection-power.md.
"""

from __future__ import annotations

import argparse
import ast
import concurrent.futures
import contextlib
import dataclasses
import difflib
import json
import os
import queue
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import tomllib
from pathlib import Path

from cosmic_ray.commands import init as cosmic_ray_init
from cosmic_ray.mutating import mutate_code
from cosmic_ray.plugins import get_operator
from cosmic_ray.work_db import WorkDB, use_db
from cosmic_ray.work_item import TestOutcome, WorkerOutcome, WorkResult

ROOT = Path(__file__).resolve().parent.parent
ZOO = Path("tests/conformant")  # relative to ROOT, and to every private copy
NETWORK_ZOO = Path("tests/network/conformant_servers")
TARGETS_MODULE = "tests.conformant.targets"
EQUIVALENT_FILE = Path(__file__).resolve().parent / "equivalent_mutants.toml"
# The modules cosmic-ray mutates; targets.py (the targets' definitions) and the packages' __init__.py
# are not implementations.
MODULES = {"publishers": ZOO / "publishers.py", "subscribers": ZOO / "subscribers.py",
           "processors": ZOO / "processors.py", "network-threaded": NETWORK_ZOO / "threaded.py",
           "network-asyncio": NETWORK_ZOO / "asyncio_server.py", "network-codec": NETWORK_ZOO / "codec.py"}
# The network zoo's targets: one server per implementation, in the plainest of its configurations
# (tests/network/conformant_servers/__init__.py names them), with the module that defines it.
SERVERS = {"threaded": ("threaded.py", "ThreadedServer"), "asyncio, batches": ("asyncio_server.py", "AsyncioServer")}
SERVER_PREFIX = "server:"
GOAL = 0.97
# A check run is one `rstck check` of one target. Every run of the kit ends by itself (each check
# has its own deadline), so this bound only catches a mutant that hangs the process; it is generous
# because a mutant that makes every check wait for its deadline takes minutes to be judged.
DEFAULT_RUN_TIMEOUT_S = 600.0

OUTCOMES_FILE = "outcomes.jsonl"  # in --keep DIR: one row per judged mutant, for --recount
RUN_FILE = "run.json"  # in --keep DIR: the run's own figures
KILLED, SURVIVED, TIMED_OUT, EQUIVALENT = "killed", "survived", "timed out", "equivalent"
# A mutant recorded as breaking a SHOULD and no MUST: no run may fail it (a SHOULD is never a MUST failure), so
# it stays out of the kill ratio; it is run all the same, and a warn on its item is what catching it means.
WARNED, NOT_WARNED = "warned", "not warned"


@dataclasses.dataclass(frozen=True)
class Mutant:
    module: str  # "publishers"
    job_id: str  # cosmic-ray's work item id
    operator: str  # "core/ReplaceComparisonOperator_Gt_GtE"
    operator_args: tuple
    occurrence: int
    line: int
    where: str  # the definition around the mutation: "Class.method"
    before: str  # the original line(s) the mutation changes, stripped
    after: str  # the same line(s) mutated
    code: str  # the whole mutated module
    targets: tuple[str, ...]  # the targets that reach the mutated code, nearest first
    in_annotation: bool = False  # the mutation is inside an annotation that is never evaluated

    @property
    def file(self) -> str:
        return str(MODULES[self.module])

    def describe(self) -> str:
        return f"{self.file}:{self.line} ({self.where}) {self.operator}: {self.before!r} -> {self.after!r}"


@dataclasses.dataclass
class Outcome:
    mutant: Mutant
    status: str  # KILLED, SURVIVED, TIMED_OUT, EQUIVALENT, WARNED, NOT_WARNED
    by_checks: bool = False  # killed with --no-fuzz (the checks alone)
    killer: str = ""  # the target whose check killed it
    exit_code: int | None = None
    evidence: str = ""  # the failing rows of the table, for the report
    reason: str = ""  # for an equivalent or SHOULD-only mutant: why
    seconds: float = 0.0  # spent judging it


# -- which targets reach which code --------------------------------------------------------------


def _names(tree: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}


def _network_builders() -> dict[str, set[str]]:
    """Server target -> the names its server's module uses (a server is built by its class alone)."""
    return {SERVER_PREFIX + name: _names(ast.parse((ROOT / NETWORK_ZOO / module).read_text())) | {cls}
            for name, (module, cls) in SERVERS.items()}


def _builders() -> dict[str, set[str]]:
    """Target name -> the names its builder in targets.py uses (`_BUILDERS` maps names to builders)."""
    tree = ast.parse((ROOT / ZOO / "targets.py").read_text())
    functions = {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)}
    registry = next(node.value for node in tree.body if isinstance(node, ast.Assign)
                    and any(isinstance(t, ast.Name) and t.id == "_BUILDERS" for t in node.targets))
    return {key.value: _names(functions[value.id]) for key, value in zip(registry.keys, registry.values)}


ANNOTATIONS_UNEVALUATED = ("an annotation, which `from __future__ import annotations` keeps unevaluated: "
                           "nothing runs it")


def _annotation_spans(tree: ast.Module) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """The (line, column) spans of every annotation, when the module never evaluates them."""
    lazy = any(isinstance(node, ast.ImportFrom) and node.module == "__future__"
               and any(alias.name == "annotations" for alias in node.names) for node in tree.body)
    if not lazy:
        return []
    annotations = []
    for node in ast.walk(tree):
        if isinstance(node, ast.arg) and node.annotation is not None:
            annotations.append(node.annotation)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.returns is not None:
            annotations.append(node.returns)
        elif isinstance(node, ast.AnnAssign):
            annotations.append(node.annotation)
    return [((a.lineno, a.col_offset), (a.end_lineno, a.end_col_offset)) for a in annotations]


class Reach:
    """Which targets can run a given line of a module of the zoo.

    A line inside a top-level class or function is reached by the targets whose builder uses that
    definition or, transitively, a definition that names it; any other line (imports, constants,
    module-level objects) is reached by every target of the module. The zoo calls its helpers by
    name, so names are the whole dependency graph; a target outside the set runs byte-identical code.
    """

    def __init__(self, module: str, source: str):
        builders = _network_builders() if module.startswith("network-") else _builders()
        tree = self._tree = ast.parse(source)
        self._spans: list[tuple[int, int, str]] = []
        uses: dict[str, set[str]] = {}
        for node in tree.body:
            if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                first = min([node.lineno] + [d.lineno for d in node.decorator_list])
                self._spans.append((first, node.end_lineno, node.name))
                uses[node.name] = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
        self._targets: dict[str, set[str]] = {}  # target -> every definition it can run
        for target, names in builders.items():
            reached, todo = set(), [n for n in names if n in uses]
            while todo:
                name = todo.pop()
                if name not in reached:
                    reached.add(name)
                    todo.extend(n for n in uses[name] if n in uses and n not in reached)
            if reached:
                self._targets[target] = reached
        self._direct = builders
        self.module = module
        self._annotations = _annotation_spans(tree)

    def in_annotation(self, start: tuple[int, int], end: tuple[int, int]) -> bool:
        return any(first <= start and end <= last for first, last in self._annotations)

    @property
    def targets(self) -> list[str]:
        return list(self._targets)

    def definition_of_line(self, line: int) -> str:
        """`Class.method` (or `function`, or `<module>`) around `line`: a mutant's place that survives edits
        elsewhere in the file."""
        names, body = [], self._tree.body
        while True:
            node = next((n for n in body if isinstance(n, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                         and n.lineno <= line <= n.end_lineno), None)
            if node is None:
                return ".".join(names) or "<module>"
            names.append(node.name)
            body = node.body

    def targets_of_line(self, line: int) -> tuple[str, ...]:
        definition = next((name for first, last, name in self._spans if first <= line <= last), None)
        if definition is None:
            return tuple(self._targets)
        reaching = [t for t, reached in self._targets.items() if definition in reached]
        # The targets that name the definition in their builder first: they are the likeliest killers.
        return tuple(sorted(reaching, key=lambda t: definition not in self._direct[t]))


# -- the mutants ---------------------------------------------------------------------------------


def _changed_lines(original: str, mutated: str) -> tuple[int, str, str]:
    """(first changed line, original text, mutated text) of a one-place mutation."""
    old, new = original.splitlines(), mutated.splitlines()
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=old, b=new, autojunk=False).get_opcodes():
        if tag != "equal":
            return (i1 + 1, " / ".join(s.strip() for s in old[i1:i2]), " / ".join(s.strip() for s in new[j1:j2]))
    return (0, "", "")


@dataclasses.dataclass(frozen=True)
class Candidate:
    """A mutation cosmic-ray can make, before it is made: cheap to filter and sample."""
    module: str
    job_id: str
    spec: object  # cosmic-ray's MutationSpec
    source: str
    reach: Reach

    @property
    def line(self) -> int:
        return self.spec.start_pos[0]

    def describe(self) -> str:
        text = self.source.splitlines()[self.line - 1].strip()
        return f"{MODULES[self.module]}:{self.line} {self.spec.operator_name}: {text!r}"

    @property
    def in_annotation(self) -> bool:
        return self.reach.in_annotation(tuple(self.spec.start_pos), tuple(self.spec.end_pos))

    def mutant(self) -> Mutant | None:
        spec = self.spec
        code = mutate_code(self.source, get_operator(spec.operator_name)(**spec.operator_args), spec.occurrence)
        if code is None:
            return None
        line, before, after = _changed_lines(self.source, code)
        return Mutant(self.module, self.job_id, spec.operator_name, tuple(sorted(spec.operator_args.items())),
                      spec.occurrence, line, self.reach.definition_of_line(line), before, after, code,
                      self.reach.targets_of_line(line), self.in_annotation)


def candidates(module: str, session: Path) -> list[Candidate]:
    """Every mutation cosmic-ray's operators find in `module`, recorded as a cosmic-ray session in `session`."""
    path = MODULES[module]
    source = (ROOT / path).read_text()
    reach = Reach(module, source)
    with contextlib.chdir(ROOT), use_db(str(session), WorkDB.Mode.create) as db:
        cosmic_ray_init(module_paths=[path], work_db=db, operator_cfgs={})
        return [Candidate(module, item.job_id, item.mutations[0], source, reach) for item in db.work_items]


def load_equivalents(path: Path = EQUIVALENT_FILE) -> list[dict]:
    if not path.exists():
        return []
    return tomllib.loads(path.read_text()).get("mutant", [])


def equivalence_reason(mutant: Mutant, entries: list[dict]) -> str | None:
    """Why `mutant` is equivalent, if it is: a mutation inside an annotation that is never evaluated, or
    one recorded in the file, where file, definition, operator and the line's text before and after
    identify it (line numbers move when the file is edited above it)."""
    if mutant.in_annotation:
        return ANNOTATIONS_UNEVALUATED
    entry = _record_of(mutant, entries)
    return entry["reason"] if entry is not None and "should" not in entry else None


def should_only_item(mutant: Mutant, entries: list[dict]) -> str | None:
    """The SHOULD item a mutant recorded as SHOULD-only breaks (`should = "3.4"` in its record), if it is one."""
    entry = _record_of(mutant, entries)
    return entry.get("should") if entry is not None else None


def _record_of(mutant: Mutant, entries: list[dict]) -> dict | None:
    for entry in entries:
        if (entry["file"] == mutant.file and entry["where"] == mutant.where and entry["operator"] == mutant.operator
                and entry["before"] == mutant.before and entry["after"] == mutant.after):
            return entry
    return None


# -- running `rstck check` -----------------------------------------------------------------------


class Sandbox:
    """A private copy of the zoo's package: a mutant is written here, never into the working tree."""

    def __init__(self, parent: Path, name: str):
        self.root = parent / name
        for package in (ZOO, NETWORK_ZOO):
            (self.root / package).mkdir(parents=True)
            for source in (ROOT / package).glob("*.py"):
                if not source.name.startswith("test_"):
                    shutil.copy2(source, self.root / package / source.name)
        for parent in (Path("tests"), NETWORK_ZOO.parent):
            (self.root / parent / "__init__.py").write_text("")  # the packages only: no test imports

    @contextlib.contextmanager
    def mutated(self, mutant: Mutant):
        path = self.root / mutant.file
        original = path.read_text()
        path.write_text(mutant.code)
        try:
            yield
        finally:
            path.write_text(original)


def rstck_check(sandbox: Sandbox, target: str, *, fuzz: bool, timeout_s: float) -> tuple[int | None, str, float]:
    """(exit code, or None when the bound ran out; the output; seconds) of one `rstck check`."""
    if target.startswith(SERVER_PREFIX):
        command = [sys.executable, str(Path(__file__).resolve()), "--serve-and-check", target[len(SERVER_PREFIX):]]
    else:
        command = [sys.executable, "-m", "rstck.cli", "check", f"{TARGETS_MODULE}:{target}"]
    if not fuzz:
        command.append("--no-fuzz")
    # The copy comes first on the path (then the caller's own, which may name the kit to measure); no bytecode,
    # since a mutant and the original can share an mtime.
    path = os.pathsep.join(filter(None, [str(sandbox.root), os.environ.get("PYTHONPATH")]))
    env = dict(os.environ, PYTHONPATH=path, PYTHONDONTWRITEBYTECODE="1")
    started = time.monotonic()
    process = subprocess.Popen(command, cwd=sandbox.root, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        output, _ = process.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)  # its own session: the worker it supervises goes too
        output, _ = process.communicate()
        return None, output, time.monotonic() - started
    return process.returncode, output, time.monotonic() - started


def serve_and_check(name: str, *, fuzz: bool) -> int:
    """`rstck check tcp://...` of the network zoo's server `name`, started from the copy in the current
    directory (a mutant's sandbox) and stopped after; the check's exit code."""
    sys.path.insert(0, os.getcwd())
    from tests.network.conformant_servers import ZOO as servers  # the sandbox's copy

    server = servers[name]()
    try:
        command = [sys.executable, "-m", "rstck.cli", "check", server.url] + ([] if fuzz else ["--no-fuzz"])
        return subprocess.run(command).returncode
    finally:
        server.stop()


def _failing_rows(output: str) -> str:
    rows = [line for line in output.splitlines() if re.search(r"\s(fail|error|blocked)\s", line)]
    summary = [line for line in output.splitlines() if line.startswith("rstck:")]
    return "\n".join(rows[:6] + summary[-1:])


def _warns_on(item: str, output: str) -> bool:
    return re.search(rf"^{re.escape(item)}\s+\S+\s+warn\s", output, re.MULTILINE) is not None


def judge(mutant: Mutant, sandbox: Sandbox, *, both_figures: bool, timeout_s: float,
          should: str | None = None) -> Outcome:
    started = time.monotonic()
    outcome = _judge(mutant, sandbox, both_figures=both_figures, timeout_s=timeout_s, should=should)
    outcome.seconds = time.monotonic() - started
    return outcome


def _judge(mutant: Mutant, sandbox: Sandbox, *, both_figures: bool, timeout_s: float,
           should: str | None) -> Outcome:
    with sandbox.mutated(mutant):
        timed_out = warned = False
        for fuzz in ((False, True) if both_figures else (False,)):
            for target in mutant.targets:
                code, output, _ = rstck_check(sandbox, target, fuzz=fuzz, timeout_s=timeout_s)
                if code is None:
                    timed_out = True
                elif code != 0:
                    return Outcome(mutant, KILLED, by_checks=not fuzz, killer=target, exit_code=code,
                                   evidence=_failing_rows(output))
                elif should is not None and _warns_on(should, output):
                    warned = True
        if should is not None and not timed_out:
            return Outcome(mutant, WARNED if warned else NOT_WARNED, reason=f"SHOULD-only: {should}")
        return Outcome(mutant, TIMED_OUT if timed_out else SURVIVED)


def record(session: Path, outcome: Outcome) -> None:
    """The outcome in cosmic-ray's session too, so that its own tools (`cosmic-ray dump`) read it."""
    test_outcome = TestOutcome.SURVIVED if outcome.status in (SURVIVED, EQUIVALENT, NOT_WARNED) else TestOutcome.KILLED
    output = "timeout" if outcome.status == TIMED_OUT else f"{outcome.status} {outcome.killer}\n{outcome.evidence}"
    with use_db(str(session), WorkDB.Mode.open) as db:
        db.set_result(outcome.mutant.job_id, WorkResult(worker_outcome=WorkerOutcome.NORMAL, output=output,
                                                        test_outcome=test_outcome))


def outcome_row(outcome: Outcome) -> dict:
    mutant = outcome.mutant
    return {"file": mutant.file, "line": mutant.line, "where": mutant.where, "operator": mutant.operator,
            "before": mutant.before, "after": mutant.after, "targets": list(mutant.targets),
            "in_annotation": mutant.in_annotation, "status": outcome.status,
            "by_checks": outcome.by_checks, "killer": outcome.killer, "exit_code": outcome.exit_code,
            "evidence": outcome.evidence, "seconds": round(outcome.seconds, 1)}


def baseline(sandbox: Sandbox, targets: list[str], *, fuzz: bool, timeout_s: float) -> float:
    """Seconds to check every unmutated target once; exits if one is not found conformant, since no
    mutant of it could then be judged."""
    total = 0.0
    for target in targets:
        code, output, seconds = rstck_check(sandbox, target, fuzz=fuzz, timeout_s=timeout_s)
        total += seconds
        if code != 0:
            sys.exit(f"baseline: `rstck check` of {target} exited {code}: the unmutated "
                     f"implementation must be conformant\n{output[-3000:]}")
    return total


# -- the figures ---------------------------------------------------------------------------------


def _ratio(killed: int, of: int) -> str:
    return f"{killed / of:.1%}" if of else "n/a"


def summary(outcomes: list[Outcome], *, both_figures: bool, seconds: float | None, baseline_s: float | None,
            baseline_targets: int | None) -> str:
    count = {status: sum(o.status == status for o in outcomes) for status in (KILLED, SURVIVED, TIMED_OUT,
                                                                               EQUIVALENT, WARNED, NOT_WARNED)}
    should_only = count[WARNED] + count[NOT_WARNED]
    judged = len(outcomes) - count[EQUIVALENT] - should_only
    by_checks = sum(o.by_checks for o in outcomes)
    lines = [f"mutants: {len(outcomes)}", f"equivalent: {count[EQUIVALENT]}"]
    if should_only:
        lines.append(f"SHOULD-only (no MUST broken; not in the ratio): {should_only}, warned on their item: "
                     f"{count[WARNED]}")
    if both_figures:
        lines += [f"killed: {count[KILLED]} (by the checks alone: {by_checks})",
                  f"survived: {count[SURVIVED]}", f"timed out: {count[TIMED_OUT]}",
                  f"kill ratio (default rstck check): {_ratio(count[KILLED], judged)} of {judged} non-equivalent "
                  f"(goal {GOAL:.0%})",
                  f"kill ratio (--no-fuzz): {_ratio(by_checks, judged)} of {judged} non-equivalent"]
    else:
        lines += [f"killed: {count[KILLED]}", f"survived: {count[SURVIVED]}", f"timed out: {count[TIMED_OUT]}",
                  f"kill ratio (--no-fuzz): {_ratio(count[KILLED], judged)} of {judged} non-equivalent"]
    if seconds is not None:
        lines += [f"time: {seconds:.0f} s",
                  f"baseline: {baseline_s:.1f} s for one rstck check of each of {baseline_targets} unmutated targets"]
    return "\n".join(lines)


def _parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--module", action="append", choices=list(MODULES),
                        help="a module of the zoos to mutate (repeatable; default: all)")
    parser.add_argument("--limit", type=int, help="a random sample of N mutants (see --seed)")
    parser.add_argument("--seed", type=int, default=0, help="the sample's seed (default 0)")
    parser.add_argument("--match", help="only the mutants whose description (FILE:LINE OPERATOR: 'LINE TEXT') "
                                        "matches this regular expression")
    parser.add_argument("--jobs", type=int, default=1, help="mutants judged at once (default 1)")
    parser.add_argument("--no-fuzz", action="store_true", help="check with --no-fuzz only: the checks' figure")
    parser.add_argument("--timeout", type=float, default=DEFAULT_RUN_TIMEOUT_S,
                        help=f"bound on one rstck check of a mutant, seconds (default {DEFAULT_RUN_TIMEOUT_S:.0f})")
    parser.add_argument("--keep", type=Path, help="keep cosmic-ray's sessions (one sqlite file per module) and "
                                                  "the outcomes here")
    parser.add_argument("--serve-and-check", metavar="SERVER", help=argparse.SUPPRESS)  # one network target
    parser.add_argument("--equivalents", type=Path, default=EQUIVALENT_FILE,
                        help="the equivalent mutants, read, never judged (default benchmarks/equivalent_mutants.toml)")
    parser.add_argument("--recount", type=Path, metavar="DIR", help="judge nothing: print the figures of the run "
                                                                    "kept in DIR with today's equivalent mutants")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = _parse(argv)
    if args.recount:
        return recount(args.recount, args.equivalents)
    if args.serve_and_check:
        return serve_and_check(args.serve_and_check, fuzz=not args.no_fuzz)
    both_figures = not args.no_fuzz
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="rstck-mutants-") as scratch:
        sessions = args.keep or Path(scratch)
        sessions.mkdir(parents=True, exist_ok=True)
        found = [c for module in (args.module or MODULES) for c in candidates(module, sessions / f"{module}.sqlite")]
        if args.match:
            found = [c for c in found if re.search(args.match, c.describe())]
        if args.limit is not None and args.limit < len(found):
            found = sorted(random.Random(args.seed).sample(found, args.limit),
                           key=lambda c: (c.module, c.line, c.spec.operator_name, c.spec.occurrence))
        mutants = [m for m in map(Candidate.mutant, found) if m is not None]
        entries = load_equivalents(args.equivalents)
        sandboxes: queue.Queue[Sandbox] = queue.Queue()
        for job in range(max(1, args.jobs)):
            sandboxes.put(Sandbox(Path(scratch), f"job-{job}"))

        reached = sorted({t for m in mutants for t in m.targets})
        print(f"{len(mutants)} mutants of {', '.join(args.module or MODULES)}; {len(reached)} targets reached",
              flush=True)
        sandbox = sandboxes.get()
        baseline_s = baseline(sandbox, reached, fuzz=both_figures, timeout_s=args.timeout)
        sandboxes.put(sandbox)
        print(f"baseline: {baseline_s:.1f} s for one rstck check of each unmutated target", flush=True)
        measured = {"both_figures": both_figures, "seconds": None, "baseline_s": baseline_s,
                    "baseline_targets": len(reached), "argv": sys.argv[1:] if argv is None else argv}
        (sessions / RUN_FILE).write_text(json.dumps(measured))  # completed at the end; --recount reads it meanwhile

        def run(mutant: Mutant) -> Outcome:
            reason = equivalence_reason(mutant, entries)
            if reason is not None:
                return Outcome(mutant, EQUIVALENT, reason=reason)
            box = sandboxes.get()
            try:
                return judge(mutant, box, both_figures=both_figures, timeout_s=args.timeout,
                             should=should_only_item(mutant, entries))
            finally:
                sandboxes.put(box)

        outcomes: list[Outcome] = []
        lock = threading.Lock()
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            for done, outcome in enumerate(pool.map(run, mutants), start=1):
                with lock:
                    outcomes.append(outcome)
                    record(sessions / f"{outcome.mutant.module}.sqlite", outcome)
                    with (sessions / OUTCOMES_FILE).open("a") as rows:
                        rows.write(json.dumps(outcome_row(outcome)) + "\n")
                killer = f" by {outcome.killer}" + ("" if outcome.by_checks else " (fuzz phase)") \
                    if outcome.status == KILLED else ""
                print(f"[{done}/{len(mutants)}] {outcome.status}{killer}: {outcome.mutant.describe()}", flush=True)
                if outcome.status == KILLED and should_only_item(outcome.mutant, entries):
                    print("  recorded as SHOULD-only, but killed: the record is wrong, or the kit failed a SHOULD",
                          flush=True)

        survivors = [o for o in outcomes if o.status in (SURVIVED, TIMED_OUT, NOT_WARNED)]
        if survivors:
            print("\nnot killed (neither killed nor recorded as equivalent), or SHOULD-only and not warned:")
            for outcome in survivors:
                targets = ", ".join(outcome.mutant.targets)
                print(f"  {outcome.status}: {outcome.mutant.describe()}  [targets: {targets}]")
        mutated_files = {str(MODULES[module]) for module in args.module or MODULES}
        stale = [e for e in entries if e["file"] in mutated_files and not any(equivalence_reason(m, [e])
                                                                               for m in mutants)]
        if stale and args.limit is None and not args.match:
            print("\nequivalent_mutants.toml entries that match no mutant (stale):")
            for entry in stale:
                print(f"  {entry['file']} ({entry['where']}) {entry['operator']}: {entry['before']!r}")
        measured.update(seconds=time.monotonic() - started)
        (sessions / RUN_FILE).write_text(json.dumps(measured))
        print()
        print(summary(outcomes, both_figures=both_figures, seconds=measured["seconds"], baseline_s=baseline_s,
                      baseline_targets=len(reached)), flush=True)
    return 0


def recount(kept: Path, equivalents: Path = EQUIVALENT_FILE) -> int:
    """The figures of a kept run again, with the equivalent mutants recorded since: a mutant is judged
    once, and read (and perhaps recorded as equivalent) after."""
    rows = [json.loads(line) for line in (kept / OUTCOMES_FILE).read_text().splitlines()]
    run_file = kept / RUN_FILE
    run = json.loads(run_file.read_text()) if run_file.exists() else {
        "both_figures": True, "seconds": None, "baseline_s": None, "baseline_targets": None, "argv": ["?"]}
    entries = load_equivalents(equivalents)
    reaches, annotations = {}, {}
    outcomes = []
    for row in rows:
        if "where" not in row:  # a run of an earlier version of this script: its file is read again
            module = next(name for name, path in MODULES.items() if str(path) == row["file"])
            if module not in reaches:
                reaches[module] = Reach(module, (ROOT / row["file"]).read_text())
            reach = reaches[module]
            row["where"] = reach.definition_of_line(row["line"])
        if "in_annotation" not in row:  # likewise: every mutation of this operator on this line is in one
            module = next(name for name, path in MODULES.items() if str(path) == row["file"])
            if module not in annotations:
                with tempfile.TemporaryDirectory() as scratch:
                    annotations[module] = [(c.spec.operator_name, c.line, c.in_annotation)
                                           for c in candidates(module, Path(scratch) / "session.sqlite")]
            spans = annotations[module]
            here = [flag for operator, line, flag in spans if operator == row["operator"] and line == row["line"]]
            row["in_annotation"] = bool(here) and all(here)
        module = next(name for name, path in MODULES.items() if str(path) == row["file"])
        mutant = Mutant(module, "", row["operator"], (), 0, row["line"], row["where"], row["before"], row["after"],
                        "", tuple(row["targets"]), row["in_annotation"])
        outcome = Outcome(mutant, row["status"], row["by_checks"], row["killer"], row["exit_code"], row["evidence"])
        reason = equivalence_reason(mutant, entries)
        if reason is not None and outcome.status == KILLED:
            print(f"recorded as equivalent, but killed (by {outcome.killer}): {mutant.describe()}")
        elif reason is not None:
            outcome.status, outcome.reason = EQUIVALENT, reason
        elif should_only_item(mutant, entries) and outcome.status in (SURVIVED, TIMED_OUT):
            outcome.status = NOT_WARNED  # recorded since the run: a warn it may have had was not looked for
        outcomes.append(outcome)
    survivors = [o for o in outcomes if o.status in (SURVIVED, TIMED_OUT, NOT_WARNED)]
    for outcome in survivors:
        print(f"  {outcome.status}: {outcome.mutant.describe()}  [targets: {', '.join(outcome.mutant.targets)}]")
    state = "still running" if run["seconds"] is None else "finished"
    print(f"\n(recounted from {kept}: the run `{' '.join(run['argv'])}`, {state})")
    print(summary(outcomes, both_figures=run["both_figures"], seconds=run["seconds"], baseline_s=run["baseline_s"],
                  baseline_targets=run["baseline_targets"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
