"""Checks of a client under test (rstck check --client CMD): each runs the client command against a listener of
the kit's, serves its one connection as a server (`ServingPeer`), and judges the frames the client sends, the
elements it prints and its exit status (docs/network.md, "Testing a client")."""

from __future__ import annotations

import contextlib
import re
from typing import Any, Callable

from rstck.protocols.network.client_case import ClientCase, ClientExit, stderr_tail
from rstck.protocols.network.recording import Awaited
from rstck.protocols.network.serving_peer import ServedStream, ServingPeer
from rstck.protocols.network.reserved import range_element
from rstck.core.verdict import RuleViolation, TargetError
from rstck.protocols.network.wire import Goodbye, describe

RANGE = "rstck/range/3"
RANGE_ELEMENTS = [range_element(i) for i in range(3)]
# What a client prints is what it delivered: the elements of the onNext signals it received, in order, and
# nothing else, and its exit status says how the stream ended. Getting that wrong breaks the semantics of the
# signals, which net.core.2 says are those of Reactive Streams.
DELIVERY = "net.core.2"
CONTRACT = "docs/network.md, the client contract"
SHOWN_LINE_CHARS = 40
HEX_LINE = re.compile(r"(?:[0-9a-f]{2})*")


def run_client(client: Any, publisher: str = RANGE, *, hello: bool = True) -> ClientCase:
    """Run the client command for `publisher` and accept its connection (serverHello sent at once unless not
    `hello`): `client` is what the check is called with (the adapter's runs of the command)."""
    return client.run(publisher, hello=hello)


@contextlib.contextmanager
def told(case: ClientCase):
    """A violation raised inside also says how the client stands: running, or its exit status, and the end of
    its stderr (a traceback, often)."""
    try:
        yield
    except RuleViolation as violation:
        raise RuleViolation(violation.rule, violation.expected, f"{violation.observed}; {case.summary()}",
                            timed_out=violation.timed_out, claim=violation.claim) from None


def serve_stream(peer: ServingPeer, elements: list[bytes], *, rule: str, element_size: int = 0,
                 form: str = "onNext", part_size: int = 0) -> ServedStream:
    """The client's subscribe answered with subscribed, `elements` sent as its demand allows, then onComplete.
    What stops it (no subscribe, no demand, a close) is a violation of `rule`."""
    stream = peer.expect_subscribe(rule=rule)
    peer.subscribed(stream, element_size)
    peer.serve(stream, elements, form=form, part_size=part_size, rule=rule,
               expected=f"the client to request all {len(elements)} elements of {peer.publisher}")
    peer.complete(stream)
    return stream


def expect_completed(case: ClientCase, elements: list[bytes], *, rule: str, what: str) -> ClientExit:
    """The client, sent `elements` and onComplete, prints exactly them and exits 0."""
    finished = case.wait_exit(rule=rule, expected="the client to exit after onComplete")
    expect_printed(case, elements, rule=rule, what=what)
    expect_exit_status(case, 0, rule=rule, after="onComplete")
    return finished


def expect_exit_status(case: ClientCase, code: int, *, rule: str, after: str) -> None:
    """The client exited with status `code`, as the contract says it does after `after`."""
    finished = case.exit
    if finished.code != code:
        raise RuleViolation(rule, f"exit status {code} after {after} ({CONTRACT})",
                            f"the client exited with status {finished.code}{said(finished)}",
                            claim=case.session.evidence.claim("exit_status", connection=case.peer, code=code))


def expect_printed(case: ClientCase, elements: list[bytes], *, rule: str, what: str) -> None:
    """The client printed exactly `elements`. A line that is no element in lowercase hex is no verdict on any
    item: the kit cannot read what the client delivered, and says so (a TargetError)."""
    finished = case.exit
    for number, line in enumerate(finished.lines, 1):
        if not HEX_LINE.fullmatch(line):
            raise TargetError(f"the client's stdout breaks the client contract ({CONTRACT}): line {number} is "
                              f"{shown(line)}, not an element in lowercase hex")
    expected = [element.hex() for element in elements]
    if finished.lines != expected:
        raise RuleViolation(rule, f"the client to print {what}", difference(finished.lines, expected),
                            claim=case.session.evidence.claim("printed", connection=case.peer, elements=elements))


def expect_failed(case: ClientCase, *, rule: str, why: str) -> None:
    """The client's exit status says its stream failed: not 0 (3 in the contract)."""
    if case.exit.code == 0:
        raise RuleViolation(rule, f"a non-zero exit status (3): {why}", "the client exited with status 0, "
                            "reporting a completed stream",
                            claim=case.session.evidence.claim("exit_failed", connection=case.peer))


def difference(printed: list[str], expected: list[str]) -> str:
    """Where the client's lines first differ from the elements' hex, in a line."""
    for number, (line, element) in enumerate(zip(printed, expected), 1):
        if line != element:
            return (f"line {number} is {shown(line)} where the element sent was {shown(element)} (it printed "
                    f"{len(printed)} lines for {len(expected)} elements)")
    if len(printed) < len(expected):
        return f"it printed {len(printed)} line{'s' * (len(printed) != 1)} for the {len(expected)} elements sent"
    return (f"it printed {len(printed) - len(expected)} line{'s' * (len(printed) - len(expected) != 1)} more than "
            f"the {len(expected)} elements sent, the first {shown(printed[len(expected)])}")


def shown(line: str) -> str:
    cut = line[:SHOWN_LINE_CHARS]
    return repr(cut) + ("…" if len(line) > SHOWN_LINE_CHARS else "")


def said(finished: ClientExit) -> str:
    tail = stderr_tail(finished.stderr)
    return f"; its stderr ends: {tail}" if tail else ""


def answers_fault_with_goodbye(client: Any, rule: str, fault: str, inject: Callable[[ServingPeer, ServedStream], None],
                               *, element_size: int = 0, taken: Callable[[ServingPeer], Awaited] | None = None) -> None:
    """The client reads rstck/range/3; after the first element, with demand outstanding, the kit injects `fault`.
    The client must answer with goodbye giving a reason and close (a client that hangs instead fails by the
    deadline, one that closes without goodbye fails at once), must print only the element sent before the
    fault, and must not exit 0: its goodbye ended the stream as by onError (net.closing.3). A frame from the
    client for which `taken(peer)` holds is an answer to the faulty frame: the client took it, which decides at once."""
    case = run_client(client)
    peer = case.peer
    expected = f"goodbye with a reason, then the connection closed, for {fault}"
    with told(case):
        stream = peer.expect_subscribe(rule=rule)
        peer.subscribed(stream, element_size)
        peer.serve(stream, RANGE_ELEMENTS[:1], rule=rule, expected=f"the client to request elements of {RANGE}")
        peer.await_demand(stream, rule=rule, expected=f"the client to request the rest of {RANGE}")
        inject(peer, stream)
        if taken is not None:
            answer = peer.until(peer.frame_of(Goodbye) | taken(peer), rule=rule, expected=expected)[-1]
            if type(answer) is not Goodbye:
                raise RuleViolation(rule, expected, f"the client answered it with {describe(answer)}: it took the "
                                    f"frame", claim=case.session.evidence.claim("answered_with_goodbye",
                                                                                connection=peer))
        peer.goodbye_then_close(rule=rule, expected=expected)
    case.wait_exit(rule=rule, expected="the client to exit once it closed the connection")
    expect_printed(case, RANGE_ELEMENTS[:1], rule=rule, what="only the element sent before the fault")
    expect_failed(case, rule="net.closing.3", why="its goodbye ended the stream as onError would")

