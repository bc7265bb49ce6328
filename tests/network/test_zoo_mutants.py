"""Mutants of the conformant zoo that the mutation benchmark found alive (benchmarks/mutation_power.py): each is
the zoo's threaded server with one line changed exactly as cosmic-ray changed it, and the kit must charge it to
the item whose sentence it breaks."""

from __future__ import annotations

import pytest

from rstck.execution.plan import plan
from rstck.reports.items import item_verdicts
from rstck.execution.runner import run_check
from rstck.core.target import load_target

from .zoo_mutants import LineMutant

pytestmark = pytest.mark.network

# A mutant that hangs costs this much; the zoo's server answers each wait in well under 0.2 s, even a check that sends
# its frames in timed pieces (as mutant_servers.WIRE_CHECK_TIMEOUT_S for the reference's mutants).
TIMEOUT_S = 1.5

SURVIVORS = {
    # _frame_end reads a bin16's length as one byte: the bin seems to end early, and its bytes are read as headers.
    "codec.py:24 bin16 length of one byte": [
        LineMutant("codec.py", 24, "0xc5: (3, 2)", "0xc5: (3, 1)", "net.rstck.3"),
    ],
    # _frame_end finds a sized item's length at the item's own first byte: a name of 32 bytes or more (a str8)
    # loses the frame boundary.
    "codec.py:53 sized length from the wrong offset": [
        LineMutant("codec.py", 53, "buf[pos + 1:pos + 1 + width]", "buf[pos * 1:pos + 1 + width]", "net.rstck.11"),
        LineMutant("codec.py", 53, "buf[pos + 1:pos + 1 + width]", "buf[pos * 1:pos + 1 + width]", "net.framing.4"),
    ],
    # The "container header incomplete" test never holds: a clientHello whose extension list (an array16) is cut
    # inside its header is read as a shorter frame.
    "codec.py:56 container header test": [
        LineMutant("codec.py", 56, "if pos + 1 + width > len(buf):", "if pos & 1 + width > len(buf):",
                   "net.framing.4"),
    ],
    # onError from the client with subscriber id -1 is taken as a valid frame.
    "codec.py:121 onError id from -1": [
        LineMutant("codec.py", 121, '_int(fields[1], 0, INT64_MAX, "the subscriber id")',
                   '_int(fields[1], -1, INT64_MAX, "the subscriber id")', "net.rstck.3"),
    ],
}


def verdicts_of(url: str, rules: str) -> tuple[dict, list]:
    target = load_target(url)
    rows = [run_check(p.check, p.target, timeout_s=TIMEOUT_S).row() for p in plan(target, rules=rules)]
    return item_verdicts(rows), rows


@pytest.mark.parametrize("mutant", [m for ms in SURVIVORS.values() for m in ms],
                         ids=[f"{name} ({m.item})" for name, ms in SURVIVORS.items() for m in ms])
def test_each_survivor_is_caught_on_its_item(mutant: LineMutant):
    server = mutant.server()
    try:
        verdicts, rows = verdicts_of(server.url, mutant.item)
    finally:
        server.stop()
    assert not [r for r in rows if r["verdict"] == "error"], [r["message"] for r in rows if r["verdict"] == "error"]
    assert verdicts[mutant.item].verdict == "fail", verdicts[mutant.item].reason


# Reachable only in a packed configuration: subscribed declares 7-byte elements, and 8-byte ones come.
DECLARES_SEVEN_BYTES = LineMutant("threaded.py", 160, "8 if self.server.pack", "7 if self.server.pack",
                                  "net.core.4", (("pack", True),))


def test_a_packed_server_declaring_the_wrong_size_is_charged_to_that_item_alone():
    """Its packed frames cannot be split into elements: net.core.4's finding. The streams of net.core.3's check
    then seem to lack their elements; that is the same finding, which blocks net.core.3, not a second one."""
    server = DECLARES_SEVEN_BYTES.server()
    try:
        verdicts, rows = verdicts_of(server.url, "net.core.*")
    finally:
        server.stop()
    assert not [r for r in rows if r["verdict"] == "error"], [r["message"] for r in rows if r["verdict"] == "error"]
    assert verdicts["net.core.4"].verdict == "fail", verdicts["net.core.4"].reason
    assert verdicts["net.core.3"].verdict == "blocked", verdicts["net.core.3"].reason
    assert "net.core.4" in verdicts["net.core.3"].reason


# Reachable only when the server subscribes to the kit: the kit's valid onError for that subscription is refused.
REFUSES_A_VALID_ON_ERROR = LineMutant("codec.py", 121, '_int(fields[1], 0, INT64_MAX, "the subscriber id")',
                                      '_int(fields[2], 0, INT64_MAX, "the subscriber id")', "net.core.2",
                                      (("subscribes_back", True),))


def test_a_server_that_refuses_the_kits_on_error_to_its_subscribe_fails_net_core_2():
    server = REFUSES_A_VALID_ON_ERROR.server()
    try:
        verdicts, rows = verdicts_of(server.url, "net.core.2")
    finally:
        server.stop()
    assert not [r for r in rows if r["verdict"] == "error"], [r["message"] for r in rows if r["verdict"] == "error"]
    assert verdicts["net.core.2"].verdict == "fail", verdicts["net.core.2"].reason
