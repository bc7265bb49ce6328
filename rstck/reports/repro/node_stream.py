"""A reproducer for a `node-stream:` target: the stream driver's operations as plain calls on the module's streams
(made by its factories, called alone or in bursts, read, inspected, listened to, settled), then the check's
judgement on what the script's recorder observed. The recorder, the steps and the judgements are written out in the
file (javascript_harness.js and node_stream_runtime.js, embedded as they are); it runs with `node` and nothing else.
"""

from __future__ import annotations

import json
import pathlib
import re
from typing import Any

from rstck.reports.repro.javascript import INDENT, javascript_file, value
from rstck.reports.repro.scenario import CannotWrite, body, label_of

RUNTIME = pathlib.Path(__file__).with_name("node_stream_runtime.js")
IDENTIFIER = re.compile(r"[A-Za-z_$][\w$]*")


def _camel(name: str) -> str:
    return re.sub(r"_([a-z])", lambda m: m.group(1).upper(), name)


def argument(data: Any) -> str:
    """An argument the kit passed, as a JavaScript expression: its options as an object literal, its errors made
    afresh, a Buffer of its bytes."""
    if isinstance(data, dict) and "object" in data:
        fields = [f"{key if IDENTIFIER.fullmatch(key) else json.dumps(key)}: {argument(v)}"
                  for key, v in data["object"].items()]
        return f"{{ {', '.join(fields)} }}" if fields else "{}"
    if isinstance(data, dict) and "list" in data:
        return f"[{', '.join(argument(v) for v in data['list'])}]"
    if isinstance(data, dict) and "bytes" in data:
        return f"Buffer.from({json.dumps(data['bytes'])}, 'hex')"
    return value(data)


def field(data: Any) -> str:
    """A field of a claim or condition: the kit's observations by name, lists item by item, plain values."""
    if isinstance(data, list):
        return f"[{', '.join(field(v) for v in data)}]"
    return value(data)


def _fields(data: dict[str, Any]) -> str:
    shown = [f"{_camel(name)}: {field(v)}" for name, v in data.items()]
    return f"{{ {', '.join(shown)} }}"


def referenced(data: Any) -> set[str]:
    """The names of the driver's observations that `data` (a claim, an operation) refers to."""
    if isinstance(data, dict):
        return {data["ref"]} if set(data) == {"ref"} else set().union(*map(referenced, data.values()))
    if isinstance(data, list):
        return set().union(*map(referenced, data))
    return set()


class NodeStreams:
    comment = "//"

    def __init__(self, referenced_names: set[str]) -> None:
        self.referenced = referenced_names  # the observations a judgement or a condition uses: kept by name

    def declaration(self, name: str, what: dict[str, Any]) -> str | None:
        if what.get("kind") == "callback":
            return f"const {name} = callback({json.dumps(label_of(name))});"
        return None  # a stream: made by its operation

    def statement(self, op: dict[str, Any], helper: dict[int, str]) -> str:
        kind = op["op"]
        if kind == "make":
            options = "" if op.get("watch", True) else ", { watch: false }"
            return (f"const {op['name']} = await make(target, {json.dumps(op['factory'])}, "
                    f"[{', '.join(argument(a) for a in op['args'])}], {json.dumps(label_of(op['name']))}{options});")
        if kind == "call":
            made = [[c["on"], json.dumps(c["method"]), *(argument(a) for a in c["args"])] for c in op["calls"]]
            if len(made) == 1:
                return f"const {op['calls'][0]['name']} = await call({', '.join(made[0])});"
            names = ", ".join(c["name"] for c in op["calls"])
            lines = [f"{INDENT * 2}[{', '.join(parts)}]" for parts in made]
            return f"const [{names}] = await burst(\n" + ",\n".join(lines) + ");"
        if kind == "read":
            return f"const {op['name']} = await read({op['on']}, {json.dumps(op['property'])});"
        if kind == "inspect":
            classes = [json.dumps(c) if isinstance(c, str) else f"{{ like: {c['like']} }}" for c in op["classes"]]
            options = {"members": f"[{', '.join(json.dumps(m) for m in op['members'])}]" if op["members"] else None,
                       "classes": f"[{', '.join(classes)}]" if classes else None}
            shown = ", ".join(f"{name}: {text}" for name, text in options.items() if text)
            return f"const {op['name']} = await inspect({op['on']}, {{ {shown} }});"
        if kind == "listen":
            react = [f"[{', '.join([json.dumps(r[0]), *(argument(a) for a in r[1])])}]" if r else "null"
                     for r in op["react"]]
            options = {"react": f"[{', '.join(react)}]" if react else None, "record": "true" if op["record"] else None,
                       "method": json.dumps(op["method"]) if op["method"] != "on" else None}
            shown = ", ".join(f"{name}: {text}" for name, text in options.items() if text)
            return f"await listen({op['on']}, {json.dumps(op['event'])}{f', {{ {shown} }}' if shown else ''});"
        if kind == "settle":
            return f"const {op['name']} = await settle();" if op.get("name") in self.referenced else "await settle();"
        if kind == "mark":
            return f"const {op['name']} = mark();"
        if kind == "unless":
            fields = {name: data for name, data in op.items() if name not in ("op", "if", "at")}
            return f"unless({json.dumps(op['if'])}, {_fields(fields)});"
        raise CannotWrite(f"an operation {kind!r}")

    def function(self, name: str, lines: list[str]) -> list[str]:
        raise CannotWrite("an operation made inside a signal, which the stream driver does not make")

    def register(self, anchor: dict[str, Any], function: str) -> str:
        raise CannotWrite("an operation made inside a signal, which the stream driver does not make")

    def claim(self, claim: dict[str, Any]) -> list[str]:
        """The check's judgement at the end (a call that never returns is judged by the watching process)."""
        if claim.get("by") != "check":
            return []
        fields = {name: data for name, data in claim.items() if name not in ("by", "claim", "rule")}
        return ["", f"judge({json.dumps(claim['rule'])}, {json.dumps(claim['claim'])}, {_fields(fields)});"]


def render(evidence: dict[str, Any], *, header: str, target: str, rule: str) -> str:
    """The whole file."""
    settings = {"target": target, "rule": rule, "deadlineS": evidence["deadline_s"]}
    names = referenced([evidence.get("claim"), *(op for op in evidence["ops"] if op["op"] == "unless")])
    return javascript_file(header, body(evidence, NodeStreams(names)), RUNTIME, settings)
