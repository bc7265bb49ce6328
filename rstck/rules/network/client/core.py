"""The core protocol, as a subscribing client takes it: signals carry the Reactive Streams semantics (what the
client prints and how it exits), and signals for an id with no open stream are ignored (net.rstck.10)."""

from __future__ import annotations

from rstck.protocols.network.reserved import ERROR_MESSAGE
from rstck.protocols.network.wire import OnComplete, OnError, OnNext, OnNextLastPart, OnNextPacked, OnNextPart, Subscribed
from rstck.core.checks import rule, untested
from rstck.rules.network.client import (DELIVERY, RANGE_ELEMENTS, expect_completed, expect_exit_status, expect_printed,
                                        run_client, told)

STRANGER = bytes.fromhex("deadbeefdeadbeef")  # in no reserved stream's first elements: a client that prints it
# took a signal meant for no stream of its own

untested("net.ids.2", "the client contract runs one subscribe per client run (one publisher name), so a client "
                      "is never led to reuse an id; and a request or cancel meant for an old stream looks on the "
                      "wire exactly like one for the new stream under the same id")


@rule("net.core.2")
def client_reports_on_error_as_a_failed_stream(client):
    """net.core.2: rstck/error, served as subscribed then onError without demand: the client prints nothing and
    exits 3, the status the client contract gives onError."""
    case = run_client(client, "rstck/error")
    with told(case):
        stream = case.peer.expect_subscribe(rule=DELIVERY)
        case.peer.subscribed(stream)
        case.peer.fail(stream, ERROR_MESSAGE)
    case.wait_exit(rule=DELIVERY, expected="the client to exit after onError")
    expect_printed(case, [], rule=DELIVERY, what="nothing: rstck/error has no element")
    expect_exit_status(case, 3, rule=DELIVERY, after="onError")


@rule("net.rstck.10")
def client_ignores_signals_for_unknown_and_finished_ids(client):
    """net.rstck.10: before answering the client's subscribe, the kit sends every stream signal for an id the
    client never used (subscribed, onNext, onNextPacked, onNextPart, onNextLastPart, onComplete, onError); then it
    serves rstck/range/3 and, in the same write as its onComplete, an onNext and an onError for that finished
    stream. The client prints exactly the 3 elements and exits 0."""
    case = run_client(client)
    peer = case.peer
    with told(case):
        stream = peer.expect_subscribe(rule="net.rstck.10")
        stranger, nobody = peer.unused_ids(2)
        unknown = f"a signal for id {stranger}, which the client never subscribed with"
        peer.send_together([(Subscribed(stranger, 8), unknown), (OnNext(stranger, STRANGER), unknown),
                            (OnNextPacked(stranger, 2, STRANGER * 2), unknown),
                            (OnNextPart(stranger, 0, STRANGER[:4]), unknown),
                            (OnNextLastPart(stranger, 0, STRANGER[4:]), unknown), (OnComplete(stranger), unknown),
                            (OnError(nobody, "for nobody"), f"onError for id {nobody}, never used")])
        peer.subscribed(stream)
        peer.serve(stream, RANGE_ELEMENTS, rule="net.rstck.10",
                   expected="the client to request all 3 elements of rstck/range/3")
        finished = f"a signal for stream {stream.id} after its onComplete"
        peer.send_together([(OnComplete(stream.id), ""), (OnNext(stream.id, STRANGER), finished),
                            (OnError(stream.id, "after onComplete"), finished)])
    expect_completed(case, RANGE_ELEMENTS, rule="net.rstck.10",
                     what="the 3 elements of its own stream, and none of the signals for other ids")

