"""A reproducer for an in-process (Python) target: the scenario as plain calls on the target's factories, the kit's
recording ends written out in the script (python_runtime.py, embedded as it is), and no import of rstck."""

from __future__ import annotations

import ast
import builtins
import pathlib
from typing import Any

from rstck.reports.repro.parsing import parsed
from rstck.reports.repro.scenario import CannotWrite, body, label_of

RUNTIME = pathlib.Path(__file__).with_name("python_runtime.py")
INDENT = "    "
PROBE_DEFAULTS = {"dwell_s": 0.0, "fail_on_next": False, "timed": False, "linger_in": [], "repeats": {}}
SOURCE_DEFAULTS = {"elements": None, "fail_with": None, "dwell_s": 0.0, "second_subscription": False,
                   "linger_in_calls": False}
BIG_INTS = {2**63 - 1: "2**63 - 1", 2**63: "2**63", 2**64: "2**64"}
# How many times a script plays a race before it says the sentence is kept: a scenario that holds a race window open
# (the kit lingers inside calls or signals, or calls from a second thread), or one of a sentence about signals or
# calls that must not overlap, whose every finding is a race whatever check made it.
RACE_ATTEMPTS = 3
RACE_ITEMS = frozenset({"1.3", "2.7"})


def value(data: Any) -> str:
    """An argument of the evidence (rstck/core/evidence.py) as a Python expression."""
    if data is None or isinstance(data, (bool, int, float, str)):
        return BIG_INTS.get(data, repr(data)) if isinstance(data, int) and not isinstance(data, bool) else repr(data)
    if "ref" in data:
        return data["ref"]
    if "int" in data:
        return value(int(data["int"]))
    if "float" in data:
        return f"float({data['float']!r})"
    if "bytes" in data:
        return repr(bytes.fromhex(data["bytes"]))
    if "range" in data:
        start, stop, step = data["range"]
        return f"range({start}, {stop})" if step == 1 else f"range({start}, {stop}, {step})"
    if "list" in data:
        return f"[{', '.join(value(v) for v in data['list'])}]"
    if "error" in data:
        if not isinstance(getattr(builtins, data["error"], None), type):
            raise CannotWrite(f"the kit's {data['error']}, no Python builtin")
        return f"{data['error']}({data['message']!r})"
    raise CannotWrite(f"an argument {data!r}")


def _keywords(op: dict[str, Any], names: tuple[str, ...]) -> str:
    return "".join(f", {name}={value(op[name])}" for name in names if name in op)


class Python:
    comment = "#"

    def __init__(self) -> None:
        self._made_in_place: dict[str, dict[str, Any]] = {}  # recorders declared where the kit made its probe

    def declaration(self, name: str, what: dict[str, Any]) -> str | None:
        kind = what.get("kind")
        label = label_of(name)
        if kind == "probe" and what.get("reuses_addresses"):
            self._made_in_place[name] = what  # made by its operation "new"
            return None
        if kind == "probe":
            return f"{name} = Recorder({label!r}{_options(what, PROBE_DEFAULTS)})"
        if kind == "source":
            return f"{name} = Source({label!r}{_options(what, SOURCE_DEFAULTS)})"
        if kind == "observer":
            return f"{name} = Observer({label!r})"
        if kind == "iterator":
            return f"{name} = elements({value(what['over'])}, {what['position']})"
        return None  # a factory's product: made by its operation

    def statement(self, op: dict[str, Any], helper: dict[int, str]) -> str:
        """One operation as a line of Python."""
        kind = op["op"]
        probe = op.get("probe")
        simple = {
            "settle": "settle()",
            "linger": "yield_to_implementation()",
            "let_go": f"{probe}.let_go()",
            "silence": f"{probe}.silence({value(op.get('rule'))})",
            "linger_also": f"{probe}.linger_also({value(op.get('kind'))})",
            "react": f"{probe}.react({op.get('kind')!r}, {op.get('repeat')!r})",
            "join": f"join_second_threads({op.get('rule')!r})",
        }
        if kind in simple:
            return simple[kind]
        if kind == "new":
            what = self._made_in_place[op["name"]]
            return f"{op['name']} = RareSizeRecorder({label_of(op['name'])!r}{_options(what, PROBE_DEFAULTS)})"
        if kind == "release":
            return f"released = weakref.ref({probe}); del {probe}; let_go_of(released)"
        if kind == "make":
            return f"{op['name']} = make(target, {op['factory']!r}{''.join(f', {value(a)}' for a in op['args'])})"
        if kind == "subscribe":
            return f"subscribe({value(op['publisher'])}, {value(op['probe'])})"
        if kind in ("request", "request_after_terminal"):
            keywords = _keywords(op, ("rule_if_raises", "judged_all_the_same", "ended"))
            return f"{probe}.{kind}({value(op['n'])}{keywords})"
        if kind == "cancel":
            return f"{probe}.cancel({_keywords(op, ('rule_if_raises',))[2:]})"
        if kind == "expect":
            return f"expect({probe}, {op['what']!r}, {op['rule']!r}{_keywords(op, ('count', 'error_type'))})"
        if kind == "expect_raise":
            on = value(op["on"])
            return (f"expect_raise({on}, {on!r}, {op['method']!r}, [{', '.join(value(a) for a in op['args'])}], "
                    f"error_type={op['error_type']!r}, rule={op['rule']!r})")
        if kind == "source_subscribe":
            return f"{op['source']}.subscribe({value(op['subscriber'])})"
        if kind == "send":
            method = {"on_next": "send_next", "on_complete": "send_complete", "on_error": "send_error"}[op["kind"]]
            args = [value(a) for a in op["args"]] + [f"{name}={value(op[name])}" for name in
                                                     ("subscription", "rule_if_raises") if name in op]
            return f"{op['source']}.{method}({', '.join(args)})"
        if kind == "send_available":
            keywords = _keywords(op, ("subscription", "limit", "after_cancel"))
            return f"{op['source']}.send_available({value(op['items'])}{keywords})"
        if kind == "feed":
            return f"feed({value(op['source'])}, {op['count']}{_keywords(op, ('burst', 'after_cancel'))})"
        if kind == "end_stream":
            return (f"end_stream({value(op['source'])}, {op['terminal']!r}, after={op['after']}"
                    f"{_keywords(op, ('rule_if_raises',))})")
        if kind == "pump":
            return f"pump({value(op['upstream'])}, {value(op['downstream'])}, {op['want']}, {value(op['elements'])})"
        if kind == "serve_upstream":
            return f"serve_upstream({value(op['upstream'])}, {value(op['downstream'])}, {op['n']})"
        if kind == "another_thread":
            return f"on_another_thread({helper[id(op)]}, rule={op['rule']!r})"
        if kind == "second_thread":
            return f"on_second_thread({helper[id(op)]}, {op['bound_s']!r})"
        raise CannotWrite(f"an operation {kind!r}")

    def function(self, name: str, lines: list[str]) -> list[str]:
        return [f"def {name}():", *(INDENT + line for line in lines or ["pass"])]

    def register(self, anchor: dict[str, Any], function: str) -> str:
        return f"{anchor['of']}.when({anchor['kind']!r}, {anchor['nth']}, {function})"

    def claim(self, claim: dict[str, Any]) -> list[str]:
        """The check's own judgement at its end, when it made one (the others are observed all along)."""
        if claim.get("by") != "check":
            return []
        fields = {name: data for name, data in claim.items() if name not in ("by", "claim", "rule")}
        if claim["claim"] == "collectable":
            probe = value(fields["probe"])
            return ["", f"alive = weakref.ref({probe})  # what the kit keeps of its subscriber: a weak reference",
                    f"del {probe}", f"expect_collected(alive, {probe!r}, {claim['rule']!r})"]
        subject = [value(fields.pop(name)) for name in ("probe", "observer", "source", "subject") if name in fields]
        positional = [*subject, *(value(fields.pop(name)) for name in ("count", "elements") if name in fields)]
        keywords = [f"{name}={value(data)}" for name, data in fields.items()]
        return ["", f"expect_{claim['claim']}({', '.join([*positional, repr(claim['rule']), *keywords])})"]


def _options(fields: dict[str, Any], defaults: dict[str, Any]) -> str:
    shown = [f"{name}={value(fields[name]) if name not in ('linger_in', 'repeats') else repr(fields[name])}"
             for name, default in defaults.items() if fields.get(name, default) != default]
    return "".join(f", {option}" for option in shown)


def runtime_for(code: str, runtime: pathlib.Path = RUNTIME) -> str:
    """The part of `runtime` (python_runtime.py, or network_runtime.py) that `code` uses (its definitions, and theirs
    in turn), with every statement that is not a definition (imports, constants), in the runtime's order: a short
    script for a short scenario."""
    source = runtime.read_text()
    lines = source.splitlines()
    tree = parsed(source)
    defined = {node.name: node for node in tree.body if isinstance(node, (ast.FunctionDef, ast.ClassDef))}
    wanted, todo = set(), _names(parsed(code))
    for node in tree.body:  # what the kept statements (tables of functions, say) use is kept too
        if not isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            todo |= _names(node)
    while todo:
        name = todo.pop()
        if name in defined and name not in wanted:
            wanted.add(name)
            todo |= _names(defined[name])
    kept = lines[:tree.body[0].lineno - 1]  # the runtime's own heading
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name not in wanted:
            continue
        start = node.lineno - 1
        while start > 0 and lines[start - 1].startswith("#"):  # the comment that heads it
            start -= 1
        kept += ["", ""] * isinstance(node, (ast.FunctionDef, ast.ClassDef)) + lines[start:node.end_lineno]
    return "\n".join(kept) + "\n"


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def render(evidence: dict[str, Any], *, header: str, target: str, rule: str,
           made: dict[str, Any] | None = None) -> str:
    """The whole script. `made`: how the script makes the target's factories without its module, and the folder of
    the project it imports that module from (rstck/reports/repro/factories.py, read_factories)."""
    lines = body(evidence, Python())
    scenario = "def scenario(target):\n" + "\n".join(INDENT + line if line else "" for line in lines)
    makes = [op for op in evidence["ops"] if op["op"] == "make"]
    without_module = (made or {}).get("factories") or {}
    scripted = {op["factory"]: without_module.get(op["factory"]) or op.get("importable") for op in makes}
    factories = scripted if all(scripted.values()) else {}
    path = (made or {}).get("path")
    spark = (evidence.get("settings") or {}).get("spark")  # the Spark master the target names ("": the default)
    config = (f"target={target!r}, rule={rule!r}, deadline_s={evidence['deadline_s']!r}, "
              f"responsiveness_bound_s={evidence['responsiveness_bound_s']!r}"
              + (", event_loop=True" if evidence.get("event_loop") else "")
              + (f", factories={factories!r}" if factories else "")
              + (f", path={path!r}" if path else "")
              + (f", attempts={RACE_ATTEMPTS}" if _races(scenario, rule) else "")
              + (", session=spark_session" if spark is not None else "")
              + (f", spark_master={spark!r}" if spark else ""))
    runtime = runtime_for(f"{scenario}\nmain(scenario, {config})")
    header += SPARK_SESSION if spark is not None else ""
    return (f'#!/usr/bin/env python3\n"""{header}"""\n\n\n{scenario}\n\n\n{runtime}\n\n'
            f'if __name__ == "__main__":\n    main(scenario, {config})\n')


# What a Spark target's script says of the session its factories are handed (their first argument).
SPARK_SESSION = ("\nIts factories are handed a Spark session first, as the target hands them one: the script starts it\n"
                 "(or gets the one running) with pyspark as your code would, on the target's master, else\n"
                 "$RSTCK_SPARK_MASTER, else an embedded local[*]; it needs pyspark and Java, and no cluster.\n")


def _races(scenario: str, rule: str) -> bool:
    return rule in RACE_ITEMS or "linger" in scenario or "on_second_thread" in scenario
