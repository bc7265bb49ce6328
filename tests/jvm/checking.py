"""`rstck check jvm:CLASS --classpath DIR` as the JVM tests run it, and what its results say of each item."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
import threading

from rstck.reports.items import item_verdicts as items_of

RSTCK = os.path.join(os.path.dirname(sys.executable), "rstck")

# The publisher mutants of tests/jvm/java/Publishers.java, and the item each one's fault breaks.
PUBLISHER_MUTANTS = {
    "OverDelivery": "1.1",
    "SignalAfterTerminal": "1.7",
    "NonPositiveIgnored": "3.9",
    "RequestThrows": "3.16",
    "NullAccepted": "1.9",
}


def item_verdicts(classpath: str, class_name: str, results: pathlib.Path, *rules: str, fuzz: bool = True,
                  timeout_s: float = 180) -> dict[str, str]:
    """Each item's verdict from the results of `rstck check jvm:CLASS`, as the kit's table shows it
    (rstck/reports/items.py), the checks of `rules` only if any are given (no fuzz phase then), without the fuzz
    phase unless `fuzz`."""
    command = [RSTCK, "check", f"jvm:{class_name}", "--classpath", classpath, "--results", str(results)]
    command += ["--rules", ",".join(rules)] if rules else []
    command += [] if fuzz else ["--no-fuzz"]
    run = subprocess.run(command, capture_output=True, text=True, timeout=timeout_s)
    rows = [json.loads(line) for path in pathlib.Path(results).glob("*.jsonl")
            for line in path.read_text().splitlines()]
    assert rows, f"rstck check wrote no results:\n{run.stdout}\n{run.stderr}"
    return {item: verdict.verdict for item, verdict in items_of(rows).items()}


def offending(results: pathlib.Path) -> str:
    """The fail, warn and error rows of a run's results, each with its message and trace: what a test that expected
    none prints."""
    rows = [json.loads(line) for path in pathlib.Path(results).glob("*.jsonl")
            for line in path.read_text().splitlines()]
    return "\n\n".join(f"{row['rule']} {row['check']}: {row['verdict']}\n{row.get('message', '')}\n"
                         f"{row.get('trace', '')}" for row in rows if row.get("verdict") in ("fail", "warn", "error"))


def assert_a_request_inside_on_next_runs_nested(jvm) -> None:
    """Subscribers$RequestsInOnNext requests inside onNext: on `jvm` (the kit's own or Spark's), that request
    reaches the kit on the Python thread that delivered on_next, still inside it, from the Java thread that
    delivered onNext (pinned threads)."""
    from rstck.protocols.jvm.proxies import FLOW, JavaElements, JavaSubscriber

    factory = jvm.bridge.newInstance("Subscribers$RequestsInOnNext")
    subscriber = JavaSubscriber(jvm.bridge, factory.createFlowSubscriber(), FLOW, JavaElements())
    java_thread = jvm.jvm.java.lang.Thread.currentThread
    delivering: list[bool] = []
    requests: list[tuple[int, bool, int]] = []

    class RecordingSubscription:
        """Where each request runs: the Python thread, inside on_next or not, and the Java thread it came from."""

        def request(self, n: int) -> None:
            requests.append((threading.get_ident(), bool(delivering), java_thread().getId()))

        def cancel(self) -> None:
            pass

    subscriber.on_subscribe(RecordingSubscription())
    delivering.append(True)
    subscriber.on_next(1)
    delivering.clear()
    assert len(requests) == 2
    assert requests[1] == (threading.get_ident(), True, factory.lastOnNextThread())
