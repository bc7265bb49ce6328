"""A reproducer for a `node:` target: the scenario as plain calls on the module's factories, the kit's recording ends
written out in the file (javascript_runtime.js, embedded as it is), run with `node` and nothing else."""

from __future__ import annotations

import functools
import json
import pathlib
import re
from typing import Any

from rstck.reports.repro.scenario import CannotWrite, body, label_of

RUNTIME = pathlib.Path(__file__).with_name("javascript_runtime.js")
HARNESS = pathlib.Path(__file__).with_name("javascript_harness.js")
INDENT = "  "
MAX_SAFE_INTEGER = 2**53 - 1
# The evidence's names (Python's) -> JavaScript's.
SIGNALS = {"on_subscribe": "onSubscribe", "on_next": "onNext", "on_error": "onError", "on_complete": "onComplete"}


def _camel(name: str) -> str:
    return re.sub(r"_([a-z])", lambda m: m.group(1).upper(), name)


def value(data: Any, *, demand: bool = False) -> str:
    """An argument of the evidence as a JavaScript expression (`demand`: a request's n, which rstck passes as a Number
    above Number.MAX_SAFE_INTEGER unless told otherwise, and so does the script: `demand(...)`)."""
    if data is None:
        return "null"
    if isinstance(data, bool):
        return "true" if data else "false"
    if isinstance(data, (int, float)):
        return json.dumps(data) if abs(data) <= MAX_SAFE_INTEGER else value({"int": str(int(data))}, demand=demand)
    if isinstance(data, str):
        return json.dumps(data)
    if "ref" in data:
        return data["ref"]
    if "int" in data:
        return f"demand({data['int']}n)" if demand else f"{data['int']}n"
    if "float" in data:
        return {"inf": "Infinity", "-inf": "-Infinity", "nan": "NaN"}[data["float"]]
    if "range" in data:
        start, stop, step = data["range"]
        return f"range({start}, {stop}, {step})"
    if "list" in data:
        return f"[{', '.join(value(v) for v in data['list'])}]"
    if "error" in data:
        return f"kitError({json.dumps(data['error'])}, {json.dumps(data['message'])})"
    raise CannotWrite(f"an argument {data!r} JavaScript cannot take")


def _options(pairs: dict[str, str]) -> str:
    shown = [f"{name}: {text}" for name, text in pairs.items() if text is not None]
    return f", {{ {', '.join(shown)} }}" if shown else ""


def _keywords(op: dict[str, Any], names: tuple[str, ...]) -> str:
    return _options({_camel(name): value(op[name]) for name in names if name in op})


class JavaScript:
    comment = "//"

    def declaration(self, name: str, what: dict[str, Any]) -> str | None:
        kind = what.get("kind")
        label = json.dumps(label_of(name))
        if kind == "probe":
            options = {"failOnNext": "true" if what.get("fail_on_next") else None,
                       "timed": "true" if what.get("timed") else None,
                       "repeats": json.dumps({SIGNALS[k]: v for k, v in what["repeats"].items()})
                       if what.get("repeats") else None}
            return f"let {name} = new Recorder({label}{_options(options)});"
        if kind == "source":
            options = {"elements": _maybe(what.get("elements")), "failWith": _maybe(what.get("fail_with"))}
            return f"const {name} = new Source({label}{_options(options)});"
        if kind == "observer":
            return f"const {name} = new Observer({label});"
        if kind == "iterator":
            return f"const {name} = elements({value(what['over'])}, {what['position']});"
        return None

    def statement(self, op: dict[str, Any], helper: dict[int, str]) -> str:
        kind = op["op"]
        probe = op.get("probe")
        simple = {
            "settle": "await settle();",
            "linger": "await turn();",  # Node runs no thread of the implementation's: its turn is the loop's
            "let_go": f"{probe}.letGo();",
            "new": "",  # its recorder is declared with the others: addresses are CPython's, not Node's
            "release": "",
            "silence": f"{probe}.silence({value(op.get('rule'))});",
            "linger_also": "",
            "react": f"{probe}.react({json.dumps(SIGNALS.get(op.get('kind'), ''))}, {json.dumps(op.get('repeat'))});",
            "join": "",
        }
        if kind in simple:
            return simple[kind]
        if kind == "make":
            args = "".join(f", {value(a)}" for a in op["args"])
            return f"const {op['name']} = make(target, {json.dumps(op['factory'])}{args});"
        if kind == "subscribe":
            return f"await subscribe({value(op['publisher'])}, {value(op['probe'])});"
        if kind in ("request", "request_after_terminal"):
            keywords = _keywords(op, ("rule_if_raises", "judged_all_the_same", "ended"))
            return f"{probe}.{_camel(kind)}({value(op['n'], demand=True)}{keywords});"
        if kind == "cancel":
            return f"{probe}.cancel({_keywords(op, ('rule_if_raises',))[2:]});"
        if kind == "expect":
            return (f"await expect({probe}, {json.dumps(op['what'])}, {json.dumps(op['rule'])}"
                    f"{_keywords(op, ('count', 'error_type'))});")
        if kind == "expect_raise":
            on = value(op["on"])
            return (f"expectRaise({on}, {json.dumps(on)}, {json.dumps(_camel(op['method']))}, "
                    f"[{', '.join(value(a) for a in op['args'])}], {{ errorType: {json.dumps(op['error_type'])}, "
                    f"rule: {json.dumps(op['rule'])} }});")
        if kind == "source_subscribe":
            return f"{op['source']}.subscribe({value(op['subscriber'])});"
        if kind == "send":
            method = {"on_next": "sendNext", "on_complete": "sendComplete", "on_error": "sendError"}[op["kind"]]
            args = [value(a) for a in op["args"]]
            keywords = _keywords(op, ("subscription", "rule_if_raises"))
            return f"{op['source']}.{method}({', '.join(args)}{keywords if args else keywords[2:]});"
        if kind == "send_available":
            keywords = _keywords(op, ("subscription", "limit", "after_cancel"))
            return f"{op['source']}.sendAvailable({value(op['items'])}{keywords});"
        if kind == "feed":
            return f"await feed({value(op['source'])}, {op['count']}{_keywords(op, ('burst', 'after_cancel'))});"
        if kind == "end_stream":
            options = {"after": str(op["after"]), "ruleIfRaises": _maybe(op.get("rule_if_raises"))}
            return f"await endStream({value(op['source'])}, {json.dumps(op['terminal'])}{_options(options)});"
        if kind == "pump":
            upstream, downstream = value(op["upstream"]), value(op["downstream"])
            return f"await pump({upstream}, {downstream}, {op['want']}, {value(op['elements'])});"
        if kind == "serve_upstream":
            return f"await serveUpstream({value(op['upstream'])}, {value(op['downstream'])}, {op['n']});"
        if kind in ("another_thread", "second_thread"):  # one thread in Node: made in place, as rstck makes it
            return f"{helper[id(op)]}();"
        raise CannotWrite(f"an operation {kind!r}")

    def function(self, name: str, lines: list[str]) -> list[str]:
        return [f"function {name}() {{", *(INDENT + line for line in lines if line), "}"]

    def register(self, anchor: dict[str, Any], function: str) -> str:
        return f"{anchor['of']}.when({json.dumps(SIGNALS[anchor['kind']])}, {anchor['nth']}, {function});"

    def claim(self, claim: dict[str, Any]) -> list[str]:
        if claim.get("by") != "check":
            return []
        fields = {name: data for name, data in claim.items() if name not in ("by", "claim", "rule")}
        rule = json.dumps(claim["rule"])
        if claim["claim"] == "collectable":
            probe = value(fields["probe"])
            return ["", f"const alive = new WeakRef({probe}); // what the kit keeps of its subscriber",
                    f"{probe} = null;", f"await expectCollected(alive, {json.dumps(probe)}, {rule});"]
        subject = [value(fields.pop(name)) for name in ("probe", "observer", "source", "subject") if name in fields]
        positional = [*subject, *(value(fields.pop(name)) for name in ("count", "elements") if name in fields)]
        options = _options({_camel(name): value(data) for name, data in fields.items()})
        function = "expect" + _camel("_" + claim["claim"])
        if f"function {function}(" not in _runtime_text():
            raise CannotWrite(f"how the check judges {claim['rule']} ({claim['claim']}): the Node scripts lack it")
        return ["", f"await {function}({', '.join([*positional, rule])}{options});"]


@functools.cache
def _runtime_text() -> str:
    return RUNTIME.read_text()


def _maybe(data: Any) -> str | None:
    return None if data is None else value(data)


def render(evidence: dict[str, Any], *, header: str, target: str, rule: str) -> str:
    """The whole file."""
    settings = {"target": target, "rule": rule, "deadlineS": evidence["deadline_s"],
                "responsivenessBoundS": evidence["responsiveness_bound_s"],
                "demand": evidence.get("settings", {}).get("demand", "number")}
    return javascript_file(header, body(evidence, JavaScript()), RUNTIME, settings)


def javascript_file(header: str, lines: list[str], runtime: pathlib.Path, settings: dict[str, Any]) -> str:
    """A reproducer for Node: `header` as its comment, the scenario's `lines`, the harness that runs it and the
    `runtime` that writes out the kit's side, embedded as they are."""
    lines = lines[next((k for k, line in enumerate(lines) if line), len(lines)):]  # from its first statement
    scenario = "async function scenario(target) {\n" + "\n".join(INDENT + line if line else "" for line in lines)
    comment = "\n".join(f" * {line}".rstrip() for line in header.splitlines())
    return (f"#!/usr/bin/env node\n/*\n{comment}\n */\n'use strict';\n\n{scenario}\n}}\n\n{HARNESS.read_text()}\n"
            f"{runtime.read_text()}\nmain(scenario, {json.dumps(settings)});\n")
