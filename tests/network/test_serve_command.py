"""`rstck serve` as a user runs it (a real process on a real port) and `rstck.connect` from plain threads."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading

import pytest

import rstck
from rstck.protocols.network.reserved import range_element

DEADLINE_S = 10.0


class Collecting:
    """A plain subscriber, called on the connection's thread: requests `demand` and waits for the end."""

    def __init__(self, demand: int):
        self.demand = demand
        self.elements: list[bytes] = []
        self.all_requested = threading.Event()
        self.ended = threading.Event()
        self.error: BaseException | None = None

    def on_subscribe(self, subscription) -> None:
        subscription.request(self.demand)

    def on_next(self, element: bytes) -> None:
        self.elements.append(element)
        if len(self.elements) == self.demand:
            self.all_requested.set()

    def on_error(self, error: BaseException) -> None:
        self.error = error
        self.ended.set()

    def on_complete(self) -> None:
        self.ended.set()


def receive(url: str, name: str, demand: int, until: str) -> Collecting:
    """Subscribe a plain subscriber to `name` with `demand`, wait for its event `until`, say goodbye."""
    subscriber = Collecting(demand)
    with rstck.connect(url) as connection:
        connection.publisher(name).subscribe(subscriber)
        assert getattr(subscriber, until).wait(DEADLINE_S)
    return subscriber


@pytest.fixture
def served():
    """A `rstck serve` process on a free loopback port: its URL; stopped with Ctrl-C (SIGINT) afterwards."""
    process = subprocess.Popen([sys.executable, "-m", "rstck.cli", "serve", "--listen", "127.0.0.1:0"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env={**os.environ, "PYTHONUNBUFFERED": "1"})
    line = process.stdout.readline()
    match = re.fullmatch(r"rstck serve: listening on (tcp://127\.0\.0\.1:\d+)\n", line)
    assert match, f"unexpected first line {line!r}; stderr: {process.stderr.read() if process.poll() else ''}"
    yield match.group(1), process
    if process.poll() is None:
        process.kill()
        process.wait(DEADLINE_S)


def test_a_remote_range_reaches_a_plain_subscriber_and_serve_stops_cleanly_on_ctrl_c(served):
    url, process = served
    subscriber = receive(url, "rstck/range/5", 5, until="ended")
    assert subscriber.error is None
    assert subscriber.elements == [range_element(i) for i in range(5)]
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=DEADLINE_S)
    assert process.returncode == 0
    assert "Traceback" not in err
    assert re.search(r"connect from 127\.0\.0\.1:\d+", err) and "goodbye from the client" in err


def test_demand_below_the_stream_length_delivers_only_what_was_requested(served):
    url, _ = served
    subscriber = receive(url, "rstck/range/10", 2, until="all_requested")
    # closed: goodbye was answered, so whatever the server sent has arrived, and it was no more than requested
    assert subscriber.elements == [range_element(0), range_element(1)]


@pytest.mark.parametrize(("argv", "message"), [
    (["--listen", "localhost"], "rstck: --listen 'localhost': expected HOST:PORT with a port from 0 to 65535, "
                                "e.g. 127.0.0.1:9000 or [::1]:9000"),
    (["--publisher", "mine=no_such_module_here:make"], "rstck: --publisher 'mine=no_such_module_here:make': cannot "
                                                        "import 'no_such_module_here' (No module named "
                                                        f"'no_such_module_here') from the current directory "
                                                        f"({os.getcwd()}) or the installed packages: run from the "
                                                        "directory that holds no_such_module_here, or install it "
                                                        "(pip install -e PROJECT)"),
])
def test_bad_options_are_one_line_errors(argv, message):
    done = subprocess.run([sys.executable, "-m", "rstck.cli", "serve", *argv], capture_output=True, text=True,
                          timeout=DEADLINE_S)
    assert done.returncode == 2
    assert done.stderr.splitlines() == [message]


def test_a_bad_url_is_a_clear_error():
    with pytest.raises(ValueError, match="a server URL starts with tcp://"):
        rstck.connect("http://127.0.0.1:9000")
