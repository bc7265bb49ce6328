"""The kit's verdicts on real-world Node streams, item by item: Node's own `stream`, and the readable-stream,
streamx and minipass packages (tests/node_stream/baselines/, installed by `make test` from its lock). Any change in
what the kit says about them shows up here.

Modern Node is not the 2011 contract: where it deviates the kit must say so, and the table records it (each
deviation is shown with a one-line node script in docs/node.md, "Findings: modern Node against the 2011
contract"). There is no JSGI baseline: no maintained library implements the JSGI stream extension, so the
baselines export no createJsgiStream and the jsgi.* checks do not run on them."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess

import pytest

from .helpers import ROOT, here, node_stream_target, run

pytestmark = pytest.mark.node

READABLE_STREAM = here("baselines", "node_modules", "readable-stream", "package.json")
INSTALLED = {name: here("baselines", "node_modules", name, "package.json") for name in ("streamx", "minipass")}
FINDINGS = "## Findings: modern Node against the 2011 contract"
NOT_INSTALLED = ("readable-stream is not installed in tests/node_stream/baselines: `make test` installs it "
                 "(npm ci --prefix tests/node_stream/baselines)")

# item -> the verdict of its checks; "fail by node.base.6": the check of that item stopped at another item's
# violation (end() itself threw, for one).
EXPECTED = {
    # createStream() is `new Stream()`: the legacy base class is an EventEmitter with pipe() and no write(),
    # end(), flush() or destroy().
    "node.base.2": "fail by node.base.6",
    "node.base.3": "fail",
    "node.base.4": "fail by node.base.3",
    "node.base.5": "fail by node.base.6",
    "node.base.6": "fail",
    "node.base.7": "fail by node.base.6",
    "node.base.8": "fail by node.base.6",
    "node.base.9": "fail",
    "node.base.10": "n/a",
    "node.base.11": "fail",
    "node.base.12": "pass",
    "node.writable.1": "pass",
    "node.writable.2": "pass",
    "node.writable.3": "pass",
    "node.writable.4": "pass",  # both checks: after end(), after destroy()
    "node.writable.5": "pass",
    "node.writable.6": "pass",
    "node.writable.7": "pass",
    "node.writable.8": "pass",
    "node.writable.9": "pass",
    "node.writable.10": "warn",  # write() after end() emits an error and returns false
    "node.writable.11": "pass",
    "node.writable.12": "pass",
    "node.writable.13": "fail",  # end() returns the stream, never false
    "node.writable.14": "warn",  # ... nor true
    "node.writable.15": "n/a",  # ... so it never has to drain
    "node.writable.16": "fail",  # no destroy event: close instead
    "node.writable.17": "fail",  # destroy(cb) takes cb for the error: an error event, cb never called
    "node.writable.18": "pass",  # ... never called, so not too early either
    "node.writable.19": "warn",  # no flush()
    "node.writable.20": "n/a",
    "node.writable.21": "n/a",
    "node.writable.22": "n/a",
    "node.writable.23": "n/a",
    "node.writable.24": "fail",  # drain yes, destroy no
    "node.writable.25": "pass",
    "node.writable.27": "pass",
    "node.readable.1": "pass",
    "node.readable.2": "pass",
    "node.readable.3": "pass",
    "node.readable.4": "pass",  # both checks: after end, after destroy()
    "node.readable.5": "pass",
    "node.readable.6": "pass",
    "node.readable.9": "pass",  # both checks: before and while flowing
    "node.readable.10": "fail",  # no destroy event
    "node.readable.11": "pass",
    "node.readable.12": "pass",
    "node.readable.13": "pass",
    "node.readable.14": "pass",
    "node.readable.15": "pass",
    "node.readable.17": "pass",
    "node.readable.18": "fail",  # a destroyed readable never emits end
    "node.readable.19": "pass",
    "node.readable.20": "pass",
    "node.filter.1": "pass",
    "node.filter.2": "pass",
    "node.filter.3": "pass",
    "node.filter.4": "pass",
    "node.filter.5": "fail",  # neither destroy nor end on destroy()
    "node.filter.6": "pass",
    "node.duplex.1": "pass",
    "node.duplex.3": "n/a",  # allowHalfOpen is true by default; see NOT_HALF_OPEN
    "node.duplex.4": "fail",  # no destroy event
    "node.duplex.5": "fail",  # destroy(cb): cb taken for the error
    "node.duplex.6": "pass",
    "node.duplex.7": "pass",
    "node.guidelines.1": "fail",  # destroyed while flowing: no end
}

# The same duplex made with allowHalfOpen: false. Node ends the write side when the read side ends, not the
# other way round: after end() it stays readable, half open with the flag false, and is never destroyed.
NOT_HALF_OPEN = {
    "node.duplex.1": "fail",
    "node.duplex.3": "fail",
    "node.duplex.4": "fail",
    "node.duplex.5": "fail",
    "node.duplex.6": "pass",
    "node.duplex.7": "pass",
}

# streamx: an EventEmitter-based Stream with destroy() and nothing else; writes take no callback; end() takes a
# chunk or a callback, not both; no readable/writable flag turns false, no allowHalfOpen; destroy(cb) takes cb for
# the error. A repeated destroy() does nothing (node.*.11, node.filter.6, node.duplex.7 pass).
STREAMX = {
    "node.base.2": "fail by node.base.6",
    "node.base.3": "fail",
    "node.base.4": "fail by node.base.3",
    "node.base.5": "fail by node.base.6",
    "node.base.6": "fail",
    "node.base.7": "fail by node.base.6",
    "node.base.8": "fail by node.base.6",
    "node.base.9": "fail",
    "node.base.10": "n/a",
    "node.base.11": "pass",
    "node.base.12": "fail",  # its Stream has no pipe()
    "node.writable.1": "pass",
    "node.writable.2": "pass",
    "node.writable.3": "pass",
    "node.writable.4": "fail",  # writable stays true after end() and destroy()
    "node.writable.5": "pass",
    "node.writable.6": "pass",
    "node.writable.7": "pass",
    "node.writable.8": "fail",  # write(data) takes no callback
    "node.writable.9": "pass",
    "node.writable.10": "warn",
    "node.writable.11": "pass",
    "node.writable.12": "fail + pass",  # end(cb) calls back; end('b', cb) and a second end(cb) never do
    "node.writable.13": "fail",  # end() returns the stream
    "node.writable.14": "warn",
    "node.writable.15": "n/a",
    "node.writable.16": "fail",
    "node.writable.17": "fail",
    "node.writable.18": "pass",
    "node.writable.19": "warn",
    "node.writable.20": "n/a",
    "node.writable.21": "n/a",
    "node.writable.22": "n/a",
    "node.writable.23": "n/a",
    "node.writable.24": "fail",
    "node.writable.25": "pass",
    "node.writable.27": "pass",
    "node.readable.1": "pass",
    "node.readable.2": "pass",
    "node.readable.3": "pass",
    "node.readable.4": "fail",  # readable stays true after end and destroy()
    "node.readable.5": "pass",
    "node.readable.6": "pass",
    "node.readable.9": "pass",
    "node.readable.10": "fail",
    "node.readable.11": "pass",
    "node.readable.12": "pass",
    "node.readable.13": "pass",
    "node.readable.14": "pass",
    "node.readable.15": "pass",
    "node.readable.17": "pass",
    "node.readable.18": "fail",
    "node.readable.19": "pass",
    "node.readable.20": "pass",
    "node.filter.1": "warn",  # no allowHalfOpen
    "node.filter.2": "fail",
    "node.filter.3": "warn",  # pause() and resume() emit no events
    "node.filter.4": "warn",
    "node.filter.5": "fail",
    "node.filter.6": "pass",
    "node.duplex.1": "fail",  # half open without the flag
    "node.duplex.3": "fail",  # ... and, the flag not being true, not destroyed by end()
    "node.duplex.4": "fail",
    "node.duplex.5": "fail",
    "node.duplex.6": "pass",
    "node.duplex.7": "pass",
    "node.guidelines.1": "fail",
}

# minipass (readable and filter only: a Minipass is both). Each destroy() emits a private Symbol event, which is
# no stream event: node.readable.11 and node.filter.6 pass.
MINIPASS = {
    "node.readable.1": "warn",  # an EventEmitter, not a Stream
    "node.readable.2": "pass",
    "node.readable.3": "pass",
    "node.readable.4": "fail + pass",  # false once ended, not once destroyed
    "node.readable.5": "pass",
    "node.readable.6": "pass",
    "node.readable.9": "n/a",  # no writable to pipe into
    "node.readable.10": "fail",
    "node.readable.11": "pass",
    "node.readable.12": "pass",
    "node.readable.13": "pass",
    "node.readable.14": "pass",
    "node.readable.15": "pass",
    "node.readable.17": "pass",
    "node.readable.18": "fail",
    "node.readable.19": "warn",  # no close event
    "node.readable.20": "warn",
    "node.filter.1": "warn",
    "node.filter.2": "fail",
    "node.filter.3": "warn",
    "node.filter.4": "pass",
    "node.filter.5": "fail",
    "node.filter.6": "pass",
    "node.guidelines.1": "fail",
}

BASELINES = [
    pytest.param("node_stream", EXPECTED, id="stream"),
    pytest.param("readable_stream", EXPECTED, id="readable-stream"),
    pytest.param("node_stream_no_half_open", NOT_HALF_OPEN, id="stream-no-half-open"),
    pytest.param("readable_stream_no_half_open", NOT_HALF_OPEN, id="readable-stream-no-half-open"),
    pytest.param("streamx", STREAMX, id="streamx"),
    pytest.param("minipass", MINIPASS, id="minipass"),
]


def _table(results) -> dict[str, str]:
    """item -> the verdict of its checks (joined with " + " where its checks disagree)."""
    found: dict[str, set[str]] = {}
    for result in results:
        verdict = result.verdict.value
        if result.violated and result.violated != result.rule:
            verdict = f"{verdict} by {result.violated}"
        found.setdefault(result.rule, set()).add(verdict)
    return {item: " + ".join(sorted(verdicts)) for item, verdicts in found.items()}


@pytest.mark.parametrize("module, expected", BASELINES)
def test_the_verdict_of_every_item(module, expected):
    if module.startswith("readable_stream") and not os.path.exists(READABLE_STREAM):
        pytest.skip(NOT_INSTALLED)
    if module in INSTALLED and not os.path.exists(INSTALLED[module]):
        pytest.skip(NOT_INSTALLED.replace("readable-stream", module, 1))
    with node_stream_target(here("baselines", f"{module}.js"), isolation="reuse") as target:
        results = run(target)
    errors = [r.message for r in results if r.verdict.value == "error"]
    assert not errors, "\n\n".join(errors)
    found = _table(results)
    changed = {item: (expected.get(item), verdict) for item, verdict in found.items() if expected.get(item) != verdict}
    missing = sorted(set(expected) - set(found))
    assert not changed and not missing, (f"(expected, found) per item: {changed}; not run: {missing}\n\n"
                                         + "\n\n".join(r.message for r in results if r.rule in changed))


def test_the_baselines_pin_readable_stream_4():
    with open(here("baselines", "package-lock.json"), encoding="utf-8") as lock:
        locked = json.load(lock)
    assert locked["lockfileVersion"] == 3
    version = locked["packages"]["node_modules/readable-stream"]["version"]
    assert version.split(".")[0] == "4"
    with open(here("baselines", "package.json"), encoding="utf-8") as manifest:
        assert json.load(manifest)["dependencies"]["readable-stream"] == version  # exact, as locked


def _documented_scripts() -> list[tuple[str, list[str]]]:
    """The one-line scripts of docs/node.md's findings, each with the output shown under it (`# ...` lines)."""
    with open(os.path.join(ROOT, "docs", "node.md"), encoding="utf-8") as doc:
        section = doc.read().split(FINDINGS, 1)[1].split("\n## ", 1)[0]
    scripts: list[tuple[str, list[str]]] = []
    for block in re.findall(r"```sh\n(.*?)```", section, re.S):
        for line in block.splitlines():
            if line.startswith("node -e "):
                scripts.append((line, []))
            elif line.startswith("# "):
                scripts[-1][1].append(line[2:])
    return scripts


@pytest.mark.parametrize("library", ["stream", "readable-stream"])
def test_the_documented_findings_hold(library):
    """Each script prints what the page says, with Node's stream module and with readable-stream."""
    if library == "readable-stream" and not os.path.exists(READABLE_STREAM):
        pytest.skip(NOT_INSTALLED)
    scripts = _documented_scripts()
    assert len(scripts) >= 8
    node = os.environ.get("RSTCK_NODE") or shutil.which("node")
    # No CA bundle to parse at each start (no script goes to the network), and every script at once.
    env = {k: v for k, v in os.environ.items() if k != "NODE_EXTRA_CA_CERTS"}
    running = []
    for script, shown in scripts:
        script = script.replace("require('stream')", f"require('{library}')")
        # In the baselines' folder, readable-stream resolves from its node_modules.
        running.append((script, shown, subprocess.Popen(script.replace("node -e ", f"{node} -e ", 1), shell=True,
                                                         cwd=here("baselines"), env=env, text=True,
                                                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)))
    for script, shown, process in running:
        out, err = process.communicate(timeout=30)
        assert out.splitlines() == shown, f"{script}\n{err}"
