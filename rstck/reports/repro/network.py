"""A reproducer for a network target: the kit's operations on each connection (rstck/protocols/network/recording.py)
as plain calls of a wire runtime written out in the script (network_runtime.py, the parts it uses), and no import
of rstck. Against a server (`tcp://HOST:PORT`) the script connects and sends the kit's frames byte for byte; against
a client command it listens, runs the command and serves it as the kit did. The Reactive Streams checks run over
the wire (the kit's client subscribing probes to reserved names) are written as the same client's calls."""

from __future__ import annotations

import pathlib
from typing import Any

from rstck.protocols.network.served_names import ServedNames, split_target_url
from rstck.reports.repro.python import INDENT, runtime_for
from rstck.reports.repro.scenario import CannotWrite, label_of

RUNTIME = pathlib.Path(__file__).with_name("network_runtime.py")
CLIENT_PREFIX = "client-cmd:"  # how a client command names its target (rstck/adapters/network)
# The rules the runtime's client judges on every frame, as rstck's client does (the others are its probes').
WIRE_MONITORED = frozenset({"1.1", "1.7", "1.9"})


def value(data: Any) -> str:
    """A value of the evidence as a Python expression: a frame's field, a claim's argument."""
    if isinstance(data, list):
        return f"[{', '.join(value(item) for item in data)}]"
    if not isinstance(data, dict):
        return "2**63 - 1" if data == 2**63 - 1 else repr(data)
    if "bytes" in data:
        return repr(bytes.fromhex(data["bytes"]))
    if "int" in data:
        return value(int(data["int"]))
    if "list" in data:
        return value(data["list"])
    if "stream" in data:
        return f"stream({data['stream']})"
    if "unused" in data:
        return f"unused({data['unused']})"
    if "ref" in data:
        return data["ref"]
    raise CannotWrite(f"a value {data!r}")


def _awaited(alternative: dict[str, Any]) -> str:
    """One alternative of a wait (recording.Awaited's description) as a call of the runtime."""
    if "ended" in alternative:
        return f"ended({alternative['ended']})"
    if "received" in alternative:
        return f"received({alternative['received'][0]}, {alternative['received'][1]})"
    if "frame" in alternative:
        kinds = ", ".join(repr(kind) for kind in alternative["frame"])
        stream_id = f", id={alternative['id']}" if "id" in alternative else ""
        return f"frame({kinds}{stream_id})"
    if "more_frames" in alternative:
        return f"more_frames({dict(map(tuple, alternative['more_frames']))!r})"
    raise CannotWrite(f"a wait for {alternative!r}")


def _fault(op: dict[str, Any]) -> str:
    return f", fault={op['fault']!r}" if "fault" in op else ""


def _rule(op: dict[str, Any]) -> str:
    return f"{op['rule']!r}, {op['expected']!r}"


def statement(op: dict[str, Any], names: ServedNames) -> str:
    """One operation on a connection (or of the kit's client) as a line of Python."""
    kind, conn = op["op"], op.get("conn")
    if kind == "connect":
        return f"{conn} = side.connect({conn!r})"
    if kind == "run":
        return f"{conn} = side.run({op['publisher']!r}, hello={op['hello']!r})"
    if kind == "send" and "bytes" in op:
        return f"{conn}.send({op['bytes']!r}, {op['shows']!r}{_fault(op)})"
    if kind == "send" and "frame" in op:
        return f"{conn}.send({value(op['frame'])}{_fault(op)})"
    if kind == "send" and "pieces" in op:
        pieces = [repr(bytes.fromhex(piece["raw"])) if "raw" in piece else value(piece["value"])
                  for piece in op["pieces"]]
        return f"{conn}.send_pieces({', '.join(pieces)}{_fault(op)})"
    if kind == "send_together":
        frames = [f"({value(frame['frame'])}, {frame.get('fault')!r})" for frame in op["frames"]]
        return f"{conn}.send_together({', '.join(frames)})"
    if kind == "wait":
        return f"{conn}.wait([{', '.join(_awaited(a) for a in op['until'])}], {_rule(op)})"
    if kind == "quiet":
        return f"{conn}.quiet({op['window_s']!r})" if "window_s" in op else f"{conn}.quiet()"
    if kind in ("read", "optimistic_subscribe"):
        return f"{conn}.{kind}({op['within_s']!r})"
    if kind == "round_trip":
        return f"{conn}.round_trip({op['id']!r})"
    if kind == "expect_stopped":
        return f"{conn}.expect_stopped({op['stream']!r}, {op['rule']!r})"
    if kind == "expect_still_stopped":
        return f"{conn}.expect_still_stopped({op['stream']!r}, {op['after']!r}, {op['rule']!r})"
    if kind == "pick_unused":
        return f"{conn}.pick_unused({op['count']!r})"
    if kind == "kit_subscribes":
        return f"{conn}.expect_answers_for({op['id']!r})"
    if kind in ("expect_subscribe", "read_to_close", "goodbye_then_close", "wait_exit"):
        return f"{conn}.{kind}({_rule(op)})"
    if kind == "await_demand":
        return f"{conn}.await_demand({op['stream']}, {_rule(op)})"
    if kind == "serve":
        options = (f", form={op['form']!r}" if op.get("form", "onNext") != "onNext" else "") + (
            f", part_size={op['part_size']}" if op.get("part_size") else "")
        return f"{conn}.serve({op['stream']}, {op['elements']!r}, {_rule(op)}{options})"
    if kind in ("until_read", "after_goodbye", "reset", "stops_after_goodbye", "answered_goodbye",
                "hold_goodbye_answer", "goodbye_or_close"):
        return f"{conn}.{kind}()"
    return _through_the_client(op, names)


def _through_the_client(op: dict[str, Any], names: ServedNames) -> str:
    """An operation of a Reactive Streams check run over the wire, as a call of the script's client: a publisher
    the check made is the name the kit's client subscribed to for it (rstck/adapters/network/server_target.py)."""
    kind, probe = op["op"], op.get("probe")
    if kind == "make" and op["factory"] == "create_publisher":
        return f"{op['name']} = {names.of_count(*op['args'])!r}"
    if kind == "make" and op["factory"] == "create_failed_publisher" and names.failed is not None:
        return f"{op['name']} = {names.failed!r}"
    if kind == "subscribe":
        return f"client.subscribe({value(op['publisher'])}, {value(probe)})"
    if kind == "request":
        return f"client.request({probe}, {value(op['n'])})"
    if kind == "cancel":
        return f"client.cancel({probe})"
    if kind == "settle":
        return "client.settle()"
    if kind in ("new", "release"):  # the client's probes are declared with the others: addresses are the kit's
        return ""
    if kind == "expect":
        keywords = "".join(f", {name}={op[name]!r}" for name in ("count", "error_type") if name in op)
        return f"client.expect({probe}, {op['what']!r}, {op['rule']!r}{keywords})"
    raise CannotWrite(f"an operation {kind!r} the network scripts do not make")


def declarations(objects: dict[str, dict[str, Any]]) -> list[str]:
    """The kit's client and its probes, when the check subscribed any (a connection is made by its operation)."""
    lines = []
    for name, what in objects.items():
        if what.get("kind") != "probe":
            continue
        if what.get("dwell_s") or what.get("fail_on_next") or what.get("linger_in") or \
                set(what.get("repeats") or {}) - {"on_next"}:
            raise CannotWrite(f"a probe that does more than request in on_next ({name})")
        repeats = f", repeats={what['repeats']!r}" if what.get("repeats") else ""
        lines.append(f"{name} = Probe({label_of(name)!r}{repeats})")
    return ["client = KitClient(side)", *lines] if lines else []


def claim(claim: dict[str, Any]) -> list[str]:
    """The check's own judgement at its end (a wait that failed, or a frame that broke a rule, the runtime sees of
    itself)."""
    by = claim.get("by")
    if by in ("wire", "expectation") or (by == "monitor" and claim.get("rule") in WIRE_MONITORED):
        return []
    if by != "check":
        raise CannotWrite(f"a judgement of {claim.get('rule')} the network scripts do not make ({by})")
    fields = {name: data for name, data in claim.items() if name not in ("by", "claim", "rule", "connection")}
    if "connection" not in claim:
        raise CannotWrite(f"the check's own judgement {claim['claim']!r}, which is not of a connection")
    if claim["claim"] == "printed":
        fields["elements"] = [element["bytes"] for element in fields["elements"]["list"]]
    keywords = "".join(f", {name}={value(data)}" for name, data in fields.items())
    return ["", f"expect_{claim['claim']}({value(claim['connection'])}, {claim['rule']!r}{keywords})"]


def render(evidence: dict[str, Any], *, header: str, target: str, rule: str) -> str:
    """The whole script."""
    if any(op.get("inside") is not None or op.get("thread") is not None for op in evidence["ops"]):
        raise CannotWrite("operations made inside signals or on threads of the kit's")
    names = split_target_url(target)[1] if target.startswith("tcp://") else ServedNames()
    lines = [*declarations(evidence["objects"]), ""]
    for op in evidence["ops"]:
        line = statement(op, names)
        if line:  # else nothing to do over the wire (a probe made or let go of)
            lines.append(f"{line:<60}  # trace #{op['at']}" if "at" in op else line)
    lines += claim(evidence["claim"])
    scenario = "def scenario(side):\n" + "\n".join(INDENT + line if line else "" for line in lines)
    given = target.removeprefix(CLIENT_PREFIX)
    counts = {names.of_count(*op["args"]): op["args"][0] for op in evidence["ops"]
              if op["op"] == "make" and op["factory"] == "create_publisher" and not names.reserved}
    promises = f", promises={counts!r}" if counts else ""
    runtime = runtime_for(f"{scenario}\nmain(scenario)", RUNTIME)
    return (f'#!/usr/bin/env python3\n"""{header}"""\n\n\n{scenario}\n\n\n{runtime}\n\n'
            f'if __name__ == "__main__":\n    main(scenario, target={given!r}, rule={rule!r}, '
            f'deadline_s={evidence["deadline_s"]!r}{promises})\n')
