"""Standalone reproducers: per failing finding, a short script that needs only the user's implementation.

`rstck check … --repro DIR` (and `pytest --rstck-repro DIR`) writes one script per distinct finding of a run, from
the evidence its row carries (rstck/core/evidence.py): a Python script for an in-process target, a JavaScript file
for `node:` and `node-stream:` targets. It performs the kit's calls in order, then judges what it did by the broken
sentence, and exits 1 while the implementation breaks it, 0 once it keeps it, 2 if it cannot run. Each script is
run once as it is written: one that does not show the finding is not kept, and its row says why, as does a row
whose evidence cannot make one (docs/reproducers.md).
"""

from __future__ import annotations

import dataclasses
import os
import pathlib
import re
import subprocess
import sys
import textwrap
from typing import Any, Iterable

from rstck.core.catalog import load_catalog
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

    @property
    def row(self) -> dict[str, Any]:
        return self.rows[0]


def language_of(loaded_as: str) -> str | None:
    """Which kind of script a target loaded as `loaded_as` gets (None: none yet)."""
    if loaded_as.startswith(("tcp://", "client-cmd:")):
        return "network"
    if loaded_as.startswith(("node:", "node-stream:")):
        return "javascript" if loaded_as.startswith("node:") else "node-stream"
    if re.fullmatch(r"[\w.]+:[\w.]+", loaded_as):
        return "python"
    return None


def reason_against(row: dict[str, Any]) -> str:
    """Why no reproducer can be made of `row` ("" when one can be)."""
    if not row.get("loaded_as"):
        return "the target was not loaded by a name a script can load again (MODULE:ATTR, node:PATH)"
    if language_of(row["loaded_as"]) is None:
        return f"reproducers of {row['loaded_as'].split(':')[0]}: targets are not written yet"
    if row.get("spec") not in LANGUAGES[language_of(row["loaded_as"])].specs:
        return f"reproducers of the {row.get('spec')} profile's items are not written yet"
    return why_not(row.get("evidence"))


# The specs whose rules the scripts' recording ends judge (the core Reactive Streams rules; the network protocol's,
# which only a network target's checks judge).
SCRIPTED_SPECS = ("reactive-streams", "network-protocol")


def findings(rows: Iterable[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """The failing and warning rows, one group per finding (an implementation's item broken the same way in several
    checks is one finding: the reason the same but for its numbers), each group's row with the shortest evidence
    first."""
    groups: dict[tuple[str, ...], list[dict[str, Any]]] = {}
    for row in rows:
        if row.get("verdict") in ("fail", "warn"):
            key = (row["implementation"], row.get("violated") or row["rule"], re.sub(r"\d+", "N", row["reason"]))
            groups.setdefault(key, []).append(row)
    return [sorted(group, key=_size) for group in groups.values()]


def _size(row: dict[str, Any]) -> int:
    evidence = row.get("evidence") or {}
    return len(evidence.get("ops", ())) if not reason_against(row) else 1 << 30


def write_reproducers(rows: Iterable[dict[str, Any]], directory: str | pathlib.Path, *,
                      confirm: bool = True) -> list[Reproducer]:
    """Write a reproducer per finding of `rows` into `directory`; with `confirm`, run each once against the
    target and keep only those that show the finding (exit 1, the broken item named)."""
    directory = pathlib.Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    made = []
    for group in findings(rows):
        made.append(_write(Reproducer(group), directory, confirm))
    return made


def attach_reproducers(rows: list[dict[str, Any]], directory: str | pathlib.Path, *,
                       confirm: bool = True) -> list[Reproducer]:
    """Write the reproducers of `rows` (write_reproducers) and say in each row of a finding what became of it: its
    `reproducer` field is {"path", "command"}, or {"none": why}."""
    made = write_reproducers(rows, directory, confirm=confirm)
    for found in made:
        # The path in full: a report written later, from another directory, still links to it.
        said = {"path": str(found.path.resolve()), "command": found.command} if found.path else {"none": found.reason}
        if found.unconfirmed:
            said["unconfirmed"] = found.unconfirmed
        for row in found.rows:
            row["reproducer"] = said
    return made


def summary(made: list[Reproducer], directory: str | pathlib.Path) -> list[str]:
    """What `rstck check --repro` prints: each finding's script, or why it has none."""
    written = [found for found in made if found.path]
    lines = [f"reproducers: {len(written)} of {len(made)} finding{'s' * (len(made) != 1)} written to {directory}"]
    for found in made:
        what = f"{found.row.get('violated') or found.row['rule']} ({found.row['check']})"
        unconfirmed = f" (not confirmed: {found.unconfirmed})" if found.unconfirmed else ""
        lines.append(f"  {what}: {found.command}{unconfirmed}" if found.path else f"  {what}: none, {found.reason}")
    return lines


def _write(found: Reproducer, directory: pathlib.Path, confirm: bool) -> Reproducer:
    """The first of the finding's rows (at most CANDIDATES of them) whose script shows it."""
    reasons = []
    for row in found.rows[:CANDIDATES]:
        path, reason = _script(row, directory, confirm)
        if path is not None:
            found.rows.remove(row)
            found.rows.insert(0, row)
            found.path, found.reason, found.unconfirmed = path, "", reason
            found.command = f"{LANGUAGES[language_of(row['loaded_as'])].run_with} {path}"
            return found
        reasons.append(reason)
    found.reason = reasons[0]
    return found


# How many of a finding's rows (checks that found the same) are tried, the shortest first, for one that reproduces it.
CANDIDATES = 3


def _script(row: dict[str, Any], directory: pathlib.Path, confirm: bool) -> tuple[pathlib.Path | None, str]:
    """The script of `row`, or None and why not; a script kept unconfirmed comes with why (a target the check left
    down, which no replay can reach until it is restarted)."""
    reason = reason_against(row)
    if reason:
        return None, reason
    kind = LANGUAGES[language_of(row["loaded_as"])]
    item = row.get("violated") or row["rule"]
    stem = re.sub(r"[^A-Za-z0-9_.-]+", "_", f"repro-{item}-{row['check']}-{_slug(row['implementation'])}")
    path = directory / f"{stem}{kind.suffix}"
    try:
        text = kind.render(row["evidence"], header=_header(row, path.name, kind), target=row["loaded_as"], rule=item)
    except CannotWrite as exc:
        return None, f"the evidence holds {exc}"
    path.write_text(text, encoding="utf-8")
    path.chmod(0o755)
    if confirm:
        shown = confirmed(kind.command(path), item, row["evidence"]["deadline_s"])
        down = row["evidence"].get("target_down")
        if shown and down:  # what a replay against it shows says nothing of the script
            return path, f"{down}, so no replay could confirm the script; restart the server, then run it"
        if shown:
            path.unlink()
            return None, shown
    return path, ""


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
    specs: tuple[str, ...] = SCRIPTED_SPECS  # the specs whose items its scripts judge

    def render(self, evidence: dict[str, Any], **given: Any) -> str:
        import importlib

        return importlib.import_module(self.module).render(evidence, **given)

    def command(self, path: pathlib.Path) -> list[str]:
        """How the kit runs it: this Python, or the Node the kit drives ($RSTCK_NODE, else `node`)."""
        program = sys.executable if self.run_with == "python" else os.environ.get("RSTCK_NODE") or self.run_with
        return [program, str(path)]


LANGUAGES = {
    "python": Kind(".py", "python", "MODULE:ATTR", "rstck.reports.repro.python",
                   "It needs only the implementation: it imports the target's module for its factories (that module "
                   "may import rstck to build the target; this script imports nothing of rstck)."),
    "javascript": Kind(".js", "node", "PATH", "rstck.reports.repro.javascript",
                       "It needs only the implementation and Node: it requires the module by its path and calls the "
                       "factories it exports."),
    "network": Kind(".py", "python", "tcp://HOST:PORT|COMMAND", "rstck.reports.repro.network",
                    "It needs only Python: it speaks the protocol itself (docs/wire-format.md), and imports nothing of "
                    "rstck.",
                    judges="It opens the kit's connections to the server (or, for a client, listens, runs the command "
                    "and serves it), sends the kit's frames of that check byte for byte in order, reads and checks "
                    "every frame as rstck does, and judges the broken sentence."),
}
# A node-stream: target's script drives the streams as rstck's stream driver does, for the items of both profiles that
# driver serves.
LANGUAGES["node-stream"] = Kind(
    ".js", "node", "PATH", "rstck.reports.repro.node_stream", LANGUAGES["javascript"].needs,
    judges="It makes the stream driver's operations of that check, in order, on the streams the target's factories "
    "make (the target named above unless another is given), records what they emit and call back as rstck's driver "
    "observes it (written out below), and judges the sentence on what it saw as the check does.",
    specs=("node-stream-contract", "jsgi-stream"))


def _slug(name: str) -> str:
    """The implementation's short name: its target's attribute, or its module's file name."""
    return re.sub(r"\.[cm]?js$", "", name.rsplit(":", 1)[-1].rsplit("/", 1)[-1])[:40]


def confirmed(command: list[str], item: str, deadline_s: float) -> str:
    """Run a script once: "" if it shows the finding (exit 1, naming `item`), else why it is not kept."""
    # What the kit imported the target from, the script may import it from (pytest's root, a source folder).
    path = os.pathsep.join([entry for entry in sys.path if entry and os.path.isdir(entry)]
                           + [os.environ.get("PYTHONPATH", "")])
    try:
        done = subprocess.run(command, capture_output=True, text=True, cwd=os.getcwd(),
                              env={**os.environ, "PYTHONPATH": path}, timeout=CONFIRM_GRACE_S + 20 * deadline_s)
    except subprocess.TimeoutExpired:
        return "its replay did not end in time"
    except OSError as exc:
        return f"its replay could not start ({exc.strerror}: {command[0]})"
    if done.returncode == EXIT_BROKEN and f"BROKEN {item}:" in done.stdout:
        return ""
    if done.returncode == EXIT_BROKEN:
        broken = sorted(set(re.findall(r"^BROKEN (\S+):", done.stdout, re.M)))
        return f"its replay showed {', '.join(broken) or 'a failure'}, not {item}, broken"
    if done.returncode == EXIT_KEPT:
        return "its replay did not show the finding (it depends on a schedule or state the replay does not recreate)"
    last = (done.stdout.strip().splitlines() or done.stderr.strip().splitlines() or ["no output"])[-1]
    return f"its replay could not run ({last})"


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
