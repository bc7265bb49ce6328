"""Standalone reproducers: per failing finding, a short script that needs only the user's implementation.

`rstck check … --repro DIR` and `pytest --rstck-repro DIR` write one script per distinct finding of a run
(Reproducers: the same choice whether the rows come all at once or a check at a time), from the evidence its row
carries (rstck/core/evidence.py), in the language its target's adapter names (rstck/core/plugins.py
Adapter.reproducers): Python for an in-process or a network target, JavaScript for a Node one. It performs the
kit's calls in order, then judges what it did by the broken sentence, and exits 1 while the implementation breaks
it, 0 once it keeps it, 2 if it cannot run. Each script is run once as it is written: one that does not show the
finding is not kept, and its row says why, as does a row whose evidence cannot make one (docs/reproducers.md).
"""

from __future__ import annotations

import dataclasses
import itertools
import os
import pathlib
import re
import subprocess
import sys
import textwrap
from typing import Any, Iterable

from rstck.core.catalog import load_catalog
from rstck.core.plugins import profiles, reproducer_language
from rstck.reports.repro.scenario import CannotWrite, why_not

EXIT_KEPT, EXIT_BROKEN, EXIT_CANNOT_RUN = 0, 1, 2
# How long the run that confirms a script may take, beyond the check's own deadline (its waits are bounded by it).
CONFIRM_GRACE_S = 60.0


@dataclasses.dataclass
class Reproducer:
    """What became of one finding: the script written for it (`path`), or why there is none (`reason`)."""

    rows: list[dict[str, Any]]  # the rows of the finding (the same item broken the same way), the shortest first
    path: pathlib.Path | None = None
    reason: str = ""
    command: str = ""
    unconfirmed: str = ""  # why the script was kept without a confirming run that showed the finding
    not_standalone: str = ""  # what its confirming run said: loading the target imported rstck, and how to avoid it
    tried: int = 0  # how many of its rows were tried for a script

    @property
    def row(self) -> dict[str, Any]:
        return self.rows[0]


def language_of(loaded_as: str) -> str | None:
    """Which kind of script a target loaded as `loaded_as` gets (None: none yet), as its adapter says."""
    language = reproducer_language(loaded_as)
    return language if language in LANGUAGES else None


def _scripted(spec: str | None, language: str) -> bool:
    """Whether the scripts of `language` judge the items of the profile `spec`, as the profile says."""
    return any(profile.name == spec and language in profile.reproduced_in for profile in profiles())


def reason_against(row: dict[str, Any]) -> str:
    """Why no reproducer can be made of `row` ("" when one can be)."""
    if not row.get("loaded_as"):
        return ("the target was not loaded by a name a script can load again: name it MODULE:ATTR (node:PATH), or "
                "define its Verification class at the top level of a test module")
    if language_of(row["loaded_as"]) is None:
        return f"reproducers of {row['loaded_as'].split(':')[0]}: targets are not written yet"
    if not _scripted(row.get("spec"), language_of(row["loaded_as"])):
        return f"reproducers of the {row.get('spec')} profile's items are not written yet"
    return why_not(row.get("evidence"))


def findings(rows: Iterable[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """The failing and warning rows, one group per finding (finding_of), each group's row with the shortest evidence
    first."""
    groups: dict[tuple[str, ...], list[dict[str, Any]]] = {}
    for row in rows:
        if row.get("verdict") in ("fail", "warn"):
            groups.setdefault(finding_of(row), []).append(row)
    return [sorted(group, key=_size) for group in groups.values()]


def finding_of(row: dict[str, Any]) -> tuple[str, ...]:
    """Which finding a row is of: an implementation's item broken the same way in several checks is one finding (the
    reason the same but for its numbers)."""
    return (row.get("loaded_as") or "", row["implementation"], row.get("violated") or row["rule"],
            re.sub(r"\d+", "N", row["reason"]))


def _size(row: dict[str, Any]) -> int:
    evidence = row.get("evidence") or {}
    return len(evidence.get("ops", ())) if not reason_against(row) else 1 << 30


class Reproducers:
    """The reproducers of one run, one per finding, whichever way its rows come: all at once (`rstck check`) or a
    check at a time (pytest). A finding's rows are tried for a script shortest first, at most CANDIDATES of them in
    all; once one has a script, every later row of the finding names that script."""

    def __init__(self, directory: str | pathlib.Path, *, confirm: bool = True):
        self.directory = pathlib.Path(directory)
        self.confirm = confirm
        self._made: dict[tuple[str, ...], Reproducer] = {}
        self._factories: dict[str, dict[str, Any]] = {}  # MODULE:ATTR -> how its scripts make its factories
        self._kept: set[pathlib.Path] = set()  # this run's scripts: another finding's script gets a name of its own

    def write(self, rows: Iterable[dict[str, Any]]) -> list[Reproducer]:
        """The findings of `rows`, each with its script or why it has none (written now, unless written before)."""
        self.directory.mkdir(parents=True, exist_ok=True)
        made = []
        for group in findings(rows):
            found = self._made.setdefault(finding_of(group[0]), Reproducer([]))
            found.rows.extend(group)
            if found.path is None and found.tried < CANDIDATES:
                self._try(found, group[:CANDIDATES - found.tried])
            made.append(found)
        return made

    def attach(self, rows: list[dict[str, Any]]) -> list[Reproducer]:
        """write(rows), and say in each row of a finding what became of it: its `reproducer` field is {"path",
        "command"}, or {"none": why}."""
        made = self.write(rows)
        for found in made:
            # The path in full: a report written later, from another directory, still links to it.
            said = ({"path": str(found.path.resolve()), "command": found.command} if found.path
                    else {"none": found.reason})
            for name in ("unconfirmed", "not_standalone"):
                if getattr(found, name):
                    said[name] = getattr(found, name)
            for row in found.rows:
                row["reproducer"] = said
        return made

    def _try(self, found: Reproducer, candidates: list[dict[str, Any]]) -> None:
        """The first of `candidates` whose script shows the finding becomes its script."""
        for row in candidates:
            found.tried += 1
            path, reason, note = self._script(row)
            if path is not None:
                self._kept.add(path)
                found.rows.remove(row)
                found.rows.insert(0, row)
                found.path, found.reason, found.unconfirmed, found.not_standalone = path, "", reason, note
                found.command = f"{LANGUAGES[language_of(row['loaded_as'])].run_with} {path}"
                return
            found.reason = found.reason or reason

    def _script(self, row: dict[str, Any]) -> tuple[pathlib.Path | None, str, str]:
        """The script of `row`, or None and why not; a script kept unconfirmed comes with why (a target the check left
        down, which no replay can reach until it is restarted); and what its run said of its being standalone."""
        reason = reason_against(row)
        if reason:
            return None, reason, ""
        kind = LANGUAGES[language_of(row["loaded_as"])]
        item = row.get("violated") or row["rule"]
        stem = re.sub(r"[^A-Za-z0-9_.-]+", "_", f"repro-{item}-{row['check']}-{_slug(row['implementation'])}")
        path = self.directory / f"{stem}{kind.suffix}"
        for number in itertools.count(2):  # two targets' implementations of the same name (pytest's test classes)
            if path not in self._kept:
                break
            path = self.directory / f"{stem}-{number}{kind.suffix}"
        given = {"made": self._made_by(row["loaded_as"])} if kind is LANGUAGES["python"] else {}
        try:
            text = kind.render(row["evidence"], header=_header(row, path.name, kind), target=row["loaded_as"],
                               rule=item, **given)
        except CannotWrite as exc:
            return None, f"the evidence holds {exc}", ""
        path.write_text(text, encoding="utf-8")
        path.chmod(0o755)
        if not self.confirm:
            return path, "", ""
        shown, note = confirmed(kind.command(path), item, row["evidence"]["deadline_s"])
        down = row["evidence"].get("target_down")
        if shown and down:  # what a replay against it shows says nothing of the script
            return path, f"{down}, so no replay could confirm the script; restart the server, then run it", ""
        if shown:
            path.unlink()
            return None, shown, ""
        return path, "", note

    def _made_by(self, loaded_as: str) -> dict[str, Any]:
        if loaded_as not in self._factories:
            from rstck.reports.repro.factories import read_factories

            self._factories[loaded_as] = read_factories(loaded_as, _script_environment())
        return self._factories[loaded_as]


def write_reproducers(rows: Iterable[dict[str, Any]], directory: str | pathlib.Path, *,
                      confirm: bool = True) -> list[Reproducer]:
    """Write a reproducer per finding of `rows` into `directory`; with `confirm`, run each once against the
    target and keep only those that show the finding (exit 1, the broken item named)."""
    return Reproducers(directory, confirm=confirm).write(rows)


def attach_reproducers(rows: list[dict[str, Any]], directory: str | pathlib.Path, *,
                       confirm: bool = True) -> list[Reproducer]:
    """Reproducers.attach of one run's rows, all at once (`rstck check`)."""
    return Reproducers(directory, confirm=confirm).attach(rows)


def summary(made: list[Reproducer], directory: str | pathlib.Path) -> list[str]:
    """What `rstck check --repro` prints: each finding's script, or why it has none."""
    written = [found for found in made if found.path]
    lines = [f"reproducers: {len(written)} of {len(made)} finding{'s' * (len(made) != 1)} written to {directory}"]
    for found in made:
        what = f"{found.row.get('violated') or found.row['rule']} ({found.row['check']})"
        unconfirmed = f" (not confirmed: {found.unconfirmed})" if found.unconfirmed else ""
        lines.append(f"  {what}: {found.command}{unconfirmed}" if found.path else f"  {what}: none, {found.reason}")
        if found.not_standalone:
            lines.append(f"    not standalone: {found.not_standalone}")
    return lines


# How many of a finding's rows (checks that found the same) are tried, the shortest first, for one that reproduces it.
CANDIDATES = 3


@dataclasses.dataclass(frozen=True)
class Kind:
    """A kind of script: how it is named, written and run."""

    suffix: str
    run_with: str  # the program that runs it, as the header tells the user
    argument: str  # what names another target on its command line
    module: str  # the module that writes it
    needs: str  # what it needs besides the implementation, in the header's words
    judges: str = ("It makes the kit's calls of that check, in order, against the target (the one named above unless "
                   "another is given), through a recording subscriber and source written out below, and judges every "
                   "signal by the publisher and subscriber rules as rstck does.")

    def render(self, evidence: dict[str, Any], **given: Any) -> str:
        import importlib

        return importlib.import_module(self.module).render(evidence, **given)

    def command(self, path: pathlib.Path) -> list[str]:
        """How the kit runs it: this Python, or the Node the kit drives ($RSTCK_NODE, else `node`)."""
        program = sys.executable if self.run_with == "python" else os.environ.get("RSTCK_NODE") or self.run_with
        return [program, str(path)]


LANGUAGES = {
    "python": Kind(".py", "python", "MODULE:ATTR", "rstck.reports.repro.python",
                   "It imports nothing of rstck: it makes each factory the check called from the implementation's "
                   "own names (main's `factories`, at the end) where it can, else through the target's module, and "
                   "then says it is not standalone."),
    "javascript": Kind(".js", "node", "PATH", "rstck.reports.repro.javascript",
                       "It needs only the implementation and Node: it requires the module by its path and calls the "
                       "factories it exports."),
    "network": Kind(".py", "python", "tcp://HOST:PORT|COMMAND", "rstck.reports.repro.network",
                    "It needs only Python: it speaks the protocol itself (docs/wire-format.md), and imports nothing of "
                    "rstck.",
                    judges="It opens the kit's connections to the server (or, for a client, listens, runs the command "
                    "and serves it), sends the kit's frames of that check byte for byte in order, reads and checks "
                    "every frame as rstck does, and judges the broken sentence."),
    "jvm": Kind(".py", "python", "jvm:CLASS", "rstck.reports.repro.jvm",
                "It imports nothing of rstck: it needs py4j and a JDK, starts a JVM with the classpath rstck ran with "
                "(or $RSTCK_CLASSPATH), and calls the class's factory methods there as rstck does."),
}
# A node-stream: target's script drives the streams as rstck's stream driver does (the items of the profiles that
# name it in their `reproduced_in`).
LANGUAGES["node-stream"] = Kind(
    ".js", "node", "PATH", "rstck.reports.repro.node_stream", LANGUAGES["javascript"].needs,
    judges="It makes the stream driver's operations of that check, in order, on the streams the target's factories "
    "make (the target named above unless another is given), records what they emit and call back as rstck's driver "
    "observes it (written out below), and judges the sentence on what it saw as the check does.")


def _slug(name: str) -> str:
    """The implementation's short name: its target's attribute, or its module's file name."""
    return re.sub(r"\.[cm]?js$", "", name.rsplit(":", 1)[-1].rsplit("/", 1)[-1])[:40]


def _script_environment() -> dict[str, str]:
    """What the kit imported the target from, the script may import it from (pytest's root, a source folder)."""
    path = os.pathsep.join([entry for entry in sys.path if entry and os.path.isdir(entry)]
                           + [os.environ.get("PYTHONPATH", "")])
    return {**os.environ, "PYTHONPATH": path}


# What a Python script says when loading its target imported rstck (python_runtime.py, main).
NOT_STANDALONE = re.compile(r"^\(not standalone: (.*)\)$", re.M)


def confirmed(command: list[str], item: str, deadline_s: float) -> tuple[str, str]:
    """Run a script once: "" if it shows the finding (exit 1, naming `item`), else why it is not kept; and why it is
    not standalone, if its run said so."""
    try:
        done = subprocess.run(command, capture_output=True, text=True, cwd=os.getcwd(), env=_script_environment(),
                              timeout=CONFIRM_GRACE_S + 20 * deadline_s)
    except subprocess.TimeoutExpired:
        return "its replay did not end in time", ""
    except OSError as exc:
        return f"its replay could not start ({exc.strerror}: {command[0]})", ""
    said = NOT_STANDALONE.search(done.stdout)
    note = said.group(1) if said else ""
    if done.returncode == EXIT_BROKEN and f"BROKEN {item}:" in done.stdout:
        return "", note
    if done.returncode == EXIT_BROKEN:
        # The verdict line, then the other violations of the run (each script's runtime: python_runtime.py _report).
        broken = sorted(set(re.findall(r"^(?:BROKEN |    )(\S+): expected", done.stdout, re.M)))
        return f"its replay showed {', '.join(broken) or 'a failure'}, not {item}, broken", note
    if done.returncode == EXIT_KEPT:
        return ("its replay did not show the finding (it depends on a schedule or state the replay does not recreate)",
                note)
    last = (done.stdout.strip().splitlines() or done.stderr.strip().splitlines() or ["no output"])[-1]
    return f"its replay could not run ({last})", note


def _header(row: dict[str, Any], name: str, kind: Kind) -> str:
    catalog = load_catalog()
    item = row.get("violated") or row["rule"]
    sentence = f"{item} {catalog[item].level}: {catalog[item].text}" if item in catalog else item
    while_checking = f"the check {row['rule']} {row['check']}"
    lines = [
        f"Reproducer of an rstck finding: {item} broken by {row['loaded_as']}.",
        "",
        *textwrap.wrap(sentence, 100),
        "",
        f"Found by {while_checking}:",
        *textwrap.wrap(row.get("reason", ""), 100, initial_indent="  ", subsequent_indent="  "),
        "",
        f"Run from the project's root:  {kind.run_with} {name} [{kind.argument}]",
        "",
        *textwrap.wrap(
            f"{kind.judges} Exit status: 1 while the implementation "
            "breaks the sentence, 0 once it keeps it, 2 if the script cannot run (the target does not load, a "
            f"factory raises). {kind.needs}", 100),
    ]
    return "\n".join(lines) + "\n"
