"""The local engine: a campaign's shards on supervised worker processes (rstck/execution/worker.py), the workers
`rstck check` and the pytest plugin run their checks in.

`rstck fuzz --jobs N` keeps N workers busy, one shard each at a time; the Spark engine's tasks and the pytest fuzz
items run their one shard the same way. A worker that dies in a shard (a crash in the target: a segfault,
`os._exit`), or stops answering, costs only that shard: it runs again in a fresh worker with the flight recorder
on (fuzz/recorder.py: the supervisor reads the trace of the example in progress after the death; too slow to keep
on for every shard), and a second loss is an error finding carrying that trace up to the step that killed the
process, and the call the worker was in. A check's death is charged at once instead: a shard may have died in any
of thousands of examples, and only the recorded second run shows which. A shard that leaves the target's threads running retires its worker, as a check does, and says so.
"""

from __future__ import annotations

import collections
import dataclasses
import functools
import os
import tempfile
import threading
from collections.abc import Callable

from rstck.core.target import Target, load_target
from rstck.core.kit_threads import is_kit_thread
from rstck.core.process_end import left_behind
from rstck.core.verdict import BadInput
from rstck.execution.worker import Ended, Worker, listen, watchdog_s
from rstck.fuzz.campaign import Progress, Shard, ShardOutcome, run_shard_on, shard_error
from rstck.fuzz.recorder import FlightRecorder, read_recording


@dataclasses.dataclass(frozen=True)
class ShardJob:
    """A shard as a worker is asked to run it: `recording`, where the flight recorder writes ("": off)."""

    position: int  # in the campaign's list of shards
    shard: Shard
    recording: str = ""


def run_local(shards: list[Shard], *, jobs: int, on_progress: Progress | None = None, method: str = "spawn",
              target: Target | None = None, blob: str | None = None, recorded: bool = False) -> list[ShardOutcome]:
    """Run shards on `jobs` supervised workers; their outcomes, in the shards' order.

    The workers are spawned: the command that asks has loaded the target (to learn its roles), and a fork of a
    process whose target may have started threads could inherit a lock held by one of them. A caller that loaded
    nothing of the target, or wants the target object it holds (`target`: a pytest item's; the worker then
    replays `blob` if given), asks for forked ones. `recorded`: the flight recorder is on from the start, so that
    a first death is already the shard's error (the pytest item, which has only its one shard)."""
    perform = functools.partial(perform_shard, target=target, blob=blob)
    workers = [Worker(perform, method=method, name="rstck-fuzz", job_name="fuzz shard")
               for _ in range(min(jobs, len(shards)))]
    outcomes: dict[int, ShardOutcome] = {}
    with tempfile.TemporaryDirectory(prefix="rstck-fuzz-") as scratch:
        def recording(position: int) -> str:
            return os.path.join(scratch, f"shard-{position}.txt")

        waiting = collections.deque(ShardJob(position, shard, recording(position) if recorded else "")
                                    for position, shard in enumerate(shards))
        running: dict[Worker, ShardJob] = {}
        try:
            while waiting or running:
                for worker in workers:
                    if worker not in running and waiting:
                        job = running[worker] = waiting.popleft()
                        worker.ask(job, label=f"the {job.shard.role} shard from seed {job.shard.first_seed}",
                                   watchdog_s=watchdog_s(job.shard.timeout_s))
                for worker, events, ended in listen(running):
                    for _progress, kind, value in events:
                        if on_progress is not None:
                            on_progress(kind, value)
                    if ended is None:
                        continue
                    job = running.pop(worker)
                    if not ended.lost:
                        outcomes[job.position] = ended.answer
                        if job.recording and not recorded:
                            ended.answer.note = ended.answer.note or \
                                "re-run after its worker process died; it did not die again"
                    elif not job.recording:  # once more, with the flight recorder on
                        waiting.appendleft(dataclasses.replace(job, recording=recording(job.position)))
                    else:
                        outcomes[job.position] = _lost_shard(job, ended)
        finally:
            for worker in workers:
                worker.close()
    return [outcomes[position] for position in range(len(shards))]


def _lost_shard(job: ShardJob, ended: Ended) -> ShardOutcome:
    """The outcome of a shard whose worker died (or was stopped) twice: an error with the recorded trace."""
    shard = job.shard
    trace, seed = read_recording(job.recording)
    if ended.lost == "died":
        what = f"the worker process died (exit code {ended.exit_code})"
    else:
        what = f"the worker process stopped answering for {ended.silent_s:g} s and was stopped"
    what += f" while fuzzing the {shard.role}" + (f", during {ended.call}" if ended.call else "")
    return ShardOutcome(shard, [shard_error(shard, what, seed=seed,
                                            trace=f"{trace}\n       (the process died here)" if trace else "")],
                        note="worker process died")


# -- in the worker -------------------------------------------------------------------------------------------


def perform_shard(job: ShardJob, tell: Callable[[tuple], None], *, target: Target | None = None,
                  blob: str | None = None) -> tuple[ShardOutcome, list[str]]:
    """A worker's run of one shard: its outcome, and the threads it left running (they retire the worker)."""
    shard = job.shard
    if target is None:
        try:
            target = load_target(shard.target)
        except BadInput as exc:
            return ShardOutcome(shard, [shard_error(shard, str(exc))]), []
    try:
        target.prepare()  # before the watchdog runs; run_shard_on meets a failure again and makes it the error
    except BadInput:
        pass
    recorder = FlightRecorder(job.recording) if job.recording else None
    before = set(threading.enumerate())
    tell(("begin",))
    try:
        outcome = run_shard_on(target, shard, blob=blob, recorder=recorder,
                               progress=lambda kind, value: tell(("progress", kind, value)))
    except Exception as exc:  # noqa: BLE001 - the kit broke in this shard: an error of the campaign, which goes on
        outcome = ShardOutcome(shard, [shard_error(shard, f"the worker raised {exc!r}")])
    if recorder is not None:
        recorder.close()
    started = [thread for thread in threading.enumerate()
               if thread not in before and thread.is_alive() and not thread.daemon and not is_kit_thread(thread)]
    outcome.left_behind = sorted({thread.name for thread in [*started, *left_behind()]})
    return outcome, outcome.left_behind
