"""The worker's own process and pipes (rstck/execution/forked.py): what `multiprocessing` gave a forked worker, on
plain `os.fork` (tests/test_cli.py shows that a run never loads `multiprocessing`)."""

from __future__ import annotations

import os
import signal
import sys
import time

import pytest

from rstck.execution.forked import ForkedProcess, channel_pair, wait
from rstck.execution.worker import Worker

BIGGER_THAN_A_PIPE = 4 * 1024 * 1024 + 7


def _started(target, *args) -> ForkedProcess:
    process = ForkedProcess(target, args)
    process.start()
    return process


def _send_and_close(channel, obj) -> None:
    channel.send(obj)
    channel.close()


def test_a_message_bigger_than_the_pipe_arrives_whole_and_then_the_end_is_seen():
    reading, writing = channel_pair()
    payload = {"rows": [b"x" * BIGGER_THAN_A_PIPE], "tail": ("a", 1)}
    process = _started(_send_and_close, writing, payload)
    writing.close()
    try:
        assert reading.poll(30)
        assert reading.recv() == payload
        assert reading.poll(30)  # the end reads as ready, as multiprocessing's connections do
        with pytest.raises(EOFError):
            reading.recv()
    finally:
        process.join(30)
        process.close()
        reading.close()
    assert process.exitcode == 0


@pytest.mark.parametrize(("ending", "code"), [(lambda: os._exit(3), 3),
                                              (lambda: os.kill(os.getpid(), signal.SIGKILL), -signal.SIGKILL),
                                              (lambda: 1 / 0, 1)])
def test_the_exit_code_says_how_the_child_ended_as_multiprocessing_tells_it(ending, code):
    process = _started(ending)
    assert wait([process.sentinel], 30) == [process.sentinel]
    process.join(30)
    assert not process.is_alive()
    assert process.exitcode == code
    process.close()


def test_join_is_bounded_and_kill_ends_a_child_that_does_not_end():
    process = _started(time.sleep, 3600)
    started = time.monotonic()
    process.join(0.2)
    assert process.is_alive() and time.monotonic() - started < 30
    process.kill()
    process.join(30)
    assert process.exitcode == -signal.SIGKILL
    process.close()


def _report_stdin(channel) -> None:
    channel.send(sys.stdin.read())


def test_the_child_reads_no_terminal_its_standard_input_is_empty():
    reading, writing = channel_pair()
    process = _started(_report_stdin, writing)
    writing.close()
    try:
        assert reading.poll(30) and reading.recv() == ""
    finally:
        process.join(30)
        process.close()
        reading.close()


def echo(job, tell):
    """A spawned worker's job: it must be importable by name."""
    tell(("progress", job))
    return ("echo", job), []


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_a_worker_runs_jobs_and_passes_their_events_forked_or_spawned(method):
    worker = Worker(echo, method=method)
    events = []
    try:
        ended = worker.run({"n": 1}, label="a job", watchdog_s=None, on_event=events.append)
        again = worker.run({"n": 2}, label="a job", watchdog_s=None, on_event=events.append)
    finally:
        worker.close()
    assert (ended.answer, again.answer) == (("echo", {"n": 1}), ("echo", {"n": 2}))
    assert events == [("progress", {"n": 1}), ("progress", {"n": 2})]

