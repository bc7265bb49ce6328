"""`rstck serve --publisher NAME=MODULE:FACTORY` imports the user's module as `rstck check` imports a target's
(one loader: rstck/core/target.py import_named), from the project's folder; the worked example of
docs/network.md "Checking the publishers you serve" runs as written; and a publisher served under a name template
is checked over the wire (`rstck check 'tcp://HOST:PORT/ticks/{n}'`), a planted bug caught with its reproducer."""

from __future__ import annotations

import pathlib
import re
import shlex
import subprocess
import threading

import pytest

import rstck

from .user_project import BIN, make_project, run

DOCS = pathlib.Path(__file__).resolve().parents[2] / "docs" / "network.md"
SECTION = "## Checking the publishers you serve"
DEADLINE_S = 30.0


def example() -> tuple[dict[str, str], list[str]]:
    """The section's files (each Python block names its path in its first line) and its shell commands."""
    text = DOCS.read_text(encoding="utf-8")
    section = text[text.index(SECTION):].split("\n## ", 1)[0]
    files, commands = {}, []
    for language, body in re.findall(r"```(\w+)\n(.*?)```", section, re.S):
        if language == "python":
            path = re.match(r"# (\S+)\n", body).group(1)
            files[path] = body
        elif language == "sh":
            commands += [line.split("  #")[0].strip() for line in body.splitlines() if line.strip()]
    files.setdefault("mypkg/__init__.py", "")
    return files, commands


class Collect:
    def __init__(self):
        self.elements, self.ended = [], threading.Event()

    def on_subscribe(self, subscription):
        subscription.request(100)

    def on_next(self, element):
        self.elements.append(bytes(element))

    def on_error(self, error):
        self.elements.append(error)
        self.ended.set()

    def on_complete(self):
        self.ended.set()


def serving(project: pathlib.Path, serve: str):
    """`serve` (an `rstck serve` command line) run in `project` on a free port, until the generator is closed: its
    URL."""
    serve = serve.removesuffix("&").strip().replace("127.0.0.1:9000", "127.0.0.1:0")
    process = subprocess.Popen([str(BIN / "rstck"), *shlex.split(serve)[1:]], cwd=project, text=True,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        line = process.stdout.readline()
        match = re.fullmatch(r"rstck serve: listening on (tcp://127\.0\.0\.1:\d+)\n", line)
        if not match:  # it ended (stdout closed) or printed something else: what it said on stderr
            process.kill()
            pytest.fail(f"rstck serve printed {line!r}; stderr: {process.communicate(timeout=DEADLINE_S)[1]}")
        yield match.group(1)
    finally:
        process.kill()
        process.wait(DEADLINE_S)


@pytest.fixture
def served(tmp_path):
    """The example's `rstck serve` command run from the project's folder, on a free port: (project, commands,
    URL)."""
    files, commands = example()
    project = make_project(tmp_path, files)
    (serve,) = [c for c in commands if c.startswith("rstck serve")]
    for url in serving(project, serve):
        yield project, commands, url


def test_serve_imports_the_users_module_from_the_projects_folder_and_serves_it(served):
    _, _, url = served
    subscriber = Collect()
    with rstck.connect(url) as connection:
        connection.publisher("ticks/5").subscribe(subscriber)
        assert subscriber.ended.wait(DEADLINE_S)
    assert subscriber.elements == [i.to_bytes(8, "big") for i in range(1, 6)]


def test_the_examples_check_commands_pass_from_the_projects_folder(served):
    project, commands, url = served
    (in_process,) = [c for c in commands if c.startswith("rstck check") and "tcp://" not in c]
    done = run(in_process, project)
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(r"^1\.1 +MUST +pass", done.stdout, re.M), done.stdout
    (server,) = [c for c in commands if c.startswith("rstck check") and "tcp://" in c]
    done = run(server.replace("tcp://127.0.0.1:9000", url) + " --rules 1.1", project)
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(r"^1\.1 +MUST +pass", done.stdout, re.M), done.stdout


def test_a_planted_bug_in_a_served_publisher_is_caught_over_the_wire_and_its_script_replays_it(tmp_path):
    """The example's publisher with a bug a remote subscriber sees (it completes one element short), served under a
    name template: `rstck check` over the wire fails 1.5, and the reproducer it writes breaks against the server."""
    files, _ = example()
    short = files["mypkg/netpubs.py"].replace("self.sent < self.n:", "self.sent < self.n - 1:").replace(
        "if self.sent == self.n:", "if self.sent >= self.n - 1:")
    assert short.count("self.n - 1") == 2, "the example's loop and its completion, made one short"
    project = make_project(tmp_path, {**files, "mypkg/netpubs.py": short})
    for url in serving(project, "rstck serve --listen 127.0.0.1:0 --publisher 'ticks/{n}=mypkg.netpubs:Ticks'"):
        done = run(f"rstck check '{url}/ticks/{{n}}' --rules 1.5 --repro repro", project)
        assert done.returncode == 1, done.stdout + done.stderr
        assert re.search(r"^1\.5 +MUST +fail", done.stdout, re.M), done.stdout
        assert "publisher.subscribe(probe#1)" in done.stdout and "'ticks/" in done.stdout, done.stdout
        scripts = sorted((project / "repro").glob("repro-1.5-*.py"))
        assert scripts, done.stdout
        replay = subprocess.run([str(BIN / "python"), str(scripts[0])], cwd=project, capture_output=True,
                                text=True, timeout=DEADLINE_S)
        assert replay.returncode == 1 and "BROKEN 1.5" in replay.stdout, replay.stdout + replay.stderr


def test_a_module_serve_cannot_import_is_said_as_check_says_it(tmp_path):
    done = run("rstck serve --publisher mine=no_such_module_here:make", tmp_path)
    assert done.returncode == 2
    assert done.stderr.startswith("rstck: --publisher 'mine=no_such_module_here:make': cannot import "
                                  "'no_such_module_here' (No module named 'no_such_module_here') from the current "
                                  f"directory ({tmp_path})"), done.stderr
