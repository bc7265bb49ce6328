"""Subscriber rules 2.1-2.13, the subscriber's side of 3.1, and the note that signal
processing must not block the publisher.

The kit plays the publisher (`target.source()`), sends each signal when a check says so,
and its recording subscription charges 2.3, 2.7 and 3.1 the moment the subscriber
breaks them. A subscriber's raise from a signal method is 2.13 unless a check names the
rule the situation is about. 2.12 and the publisher's half of 2.13 are checked on
publishers.
"""

from __future__ import annotations

from rstck.core.evidence import recorded
from rstck.core.signals import show
from rstck.core.verdict import NotApplicable, RuleViolation
from rstck.core.checks import rule, untested

# How many elements a check offers a subscriber at most.
STREAM = 32


def attach(session, *, observed: bool = False, **source_options):
    """A subscriber under test (white box when `observed`), subscribed to a manual kit source; settled."""
    observer = session.observer() if observed else None
    subscriber = session.create_whitebox_subscriber(observer) if observed else session.create_subscriber()
    source = session.source(**source_options)
    source.subscribe(subscriber)
    session.settle()
    return source, subscriber, observer


def _evidence(session):
    return session.evidence


@recorded("feed", lambda session, evidence, source, count=STREAM, *, burst=False, after_cancel=0: {
    "source": evidence.value(source), "count": count, "burst": burst, "after_cancel": after_cancel}, _evidence)
def feed(session, source, count: int = STREAM, *, burst: bool = False, after_cancel: int = 0) -> int:
    """Offer `count` elements as demand allows, settling after each (or, in a burst, after all the demand
    there is); once the subscriber cancels, at most `after_cancel` more before the next settle (2.8).
    Returns how many went."""
    sent = 0
    while sent < count:
        subscription = source.subscription
        if subscription.terminal or subscription.cancel_settled:
            break
        went = source.send_available(range(sent, count), limit=None if burst else 1, after_cancel=after_cancel)
        session.settle()
        if not went:
            break
        sent += went
    return sent


@rule("2.1")
def subscriber_signals_demand_to_receive_on_next(session):
    """2.1: the kit sends on_next only against demand, so a subscriber must request to receive any."""
    source, _, _ = attach(session)
    if not source.subscription.requested:
        requests = source.subscription.requests
        made = ", ".join(f"request({show(n)})" for n in requests) if requests else "no request"
        raise RuleViolation("2.1", "request(n) with n > 0 after on_subscribe (the kit sends no on_next without "
                            "demand)", f"{made} once settled" + session.quiet_note(),
                            claim=session.evidence.claim("requested", source=source))
    feed(session, source, 8)


@rule("2.1.batch-demand")
def subscriber_requests_more_than_one_at_a_time(session):
    """2.1 (RECOMMENDED): demand comes in batches, not one element at a time (stop-and-wait)."""
    source, _, _ = attach(session)
    delivered = feed(session, source, STREAM)
    requests = source.subscription.requests
    if delivered >= 4 and requests and max(requests) <= 1:
        raise RuleViolation("2.1.batch-demand", "requests for more than one element",
                            f"{len(requests)} requests of 1 for {delivered} elements",
                            claim=session.evidence.claim("batch_demand", source=source))


untested("2.1.request-last",
         "whether a subscriber calls its subscription at the very end of processing a signal is not visible "
         "from outside; what it protects against, reordering, is checked by 2.11 (white box)")


@rule("2.2")
def on_next_returns_promptly(session):
    """2.2 (RECOMMENDED): on_next returns within the responsiveness bound; slow processing belongs on
    another thread."""
    source, subscriber, _ = attach(session)
    feed(session, source, 8)
    label = session.labels.of(subscriber)
    slowest = max((s.duration_s for s in session.trace.signals_of(label, "on_next")), default=0.0)
    if slowest > session.responsiveness_bound_s:
        raise RuleViolation("2.2", f"on_next to return within {session.responsiveness_bound_s:g} s",
                            f"the slowest took {slowest:.3f} s", timed_out=True,
                            claim=session.evidence.claim("on_next_within", source=source))


@recorded("end_stream", lambda session, evidence, source, terminal, *, after, **send_options: {
    "source": evidence.value(source), "terminal": terminal, "after": after, **send_options}, _evidence)
def end_stream(session, source, terminal: str, *, after: int, **send_options) -> None:
    """Offer `after` elements, then end the stream with `terminal` (unless the subscriber cancelled). The
    last element and the end go together, without a settle between them, so that a subscriber that
    requests more on a thread or task of its own still has that request under way when the end comes."""
    sent = feed(session, source, max(0, after - 1))
    subscription = source.subscription
    if sent < after and not subscription.cancelled and source.can_signal():
        source.send_available([sent], limit=1)
    if not subscription.cancelled and source.can_signal():
        if terminal == "on_complete":
            source.send_complete(**send_options)
        else:
            source.send_error(RuntimeError("the kit's source fails on purpose"), **send_options)
    session.settle()


@rule("async.non-blocking")
def signals_do_not_block_the_publisher(session):
    """The note on asynchrony: on_next and on_complete must not block the calling publisher (a signal
    that never returns is charged here)."""
    source, _, _ = attach(session)
    end_stream(session, source, "on_complete", after=4)


@rule("2.3")
def on_complete_does_not_call_the_subscription(session):
    """2.3: nothing is called on the subscription or publisher from inside on_complete."""
    source, _, _ = attach(session)
    end_stream(session, source, "on_complete", after=2)


@rule("2.3")
def on_error_does_not_call_the_subscription(session):
    """2.3 for on_error."""
    source, _, _ = attach(session)
    end_stream(session, source, "on_error", after=2)


untested("2.4",
         "considering the subscription cancelled is the subscriber's own state: what it may still do, a request "
         "or cancel after the end, is a NOP on a cancelled subscription (1.6, 3.6), so such a call shows nothing "
         "against it; what a publisher owes those calls is checked by 1.6")


@rule("2.5")
def second_subscription_is_cancelled(session):
    """2.5: given a second on_subscribe while it has an active subscription, the subscriber cancels the
    new one."""
    first, subscriber, _ = attach(session)
    second = session.source(second_subscription=True)  # the situation 2.5 is about
    second.subscribe(subscriber)
    session.settle()
    if not second.subscription.cancelled:
        raise RuleViolation("2.5", f"cancel() on the second subscription {second.subscription.name}",
                            f"it was not cancelled (calls on it: {second.subscription.requests or 'none'})",
                            claim=session.evidence.claim("cancelled", source=second))


# 2.6 is checked on processors (processor.py): a plain subscriber's need of its subscription is known only
# to it, but a single-use processor whose only subscriber is gone can have no further use for its upstream.


@rule("2.7")
def subscription_calls_are_serial(session):
    """2.7: request and cancel are never called concurrently; a call arriving on a foreign thread dwells
    briefly so an overlapping one can show."""
    source, _, _ = attach(session, dwell_s=0.0005)
    feed(session, source, STREAM)


@rule("2.8")
def on_next_after_cancel_is_taken_in_stride(session):
    """2.8: once the subscriber cancels with demand still pending, one more on_next (sent before the kit
    settles: "eventually" is the publisher's latitude) must return normally. Needs a subscriber that
    cancels of its own accord within the stream, inside a signal or while the elements go in a burst."""
    source, _, _ = attach(session)
    feed(session, source, STREAM * 2, burst=True, after_cancel=1)
    subscription = source.subscription
    if not subscription.cancelled:
        raise NotApplicable(f"the subscriber did not cancel within {STREAM * 2} elements; 2.8 needs one that does")
    if not subscription.delivered_after_cancel:
        raise NotApplicable("the subscriber cancelled with no demand pending, or only once the elements had "
                            "stopped coming")


@rule("2.9")
def on_complete_as_the_first_signal_is_accepted(session):
    """2.9: on_complete straight after on_subscribe, before any element, returns normally."""
    source, _, _ = attach(session)
    end_stream(session, source, "on_complete", after=0, rule_if_raises="2.9")


@rule("2.9")
def on_complete_after_elements_is_accepted(session):
    """2.9: on_complete with demand still pending returns normally."""
    source, _, _ = attach(session)
    end_stream(session, source, "on_complete", after=2, rule_if_raises="2.9")


@rule("2.10")
def on_error_as_the_first_signal_is_accepted(session):
    """2.10: on_error straight after on_subscribe, before any element, returns normally."""
    source, _, _ = attach(session)
    end_stream(session, source, "on_error", after=0, rule_if_raises="2.10")


@rule("2.10")
def on_error_after_elements_is_accepted(session):
    """2.10: on_error with demand still pending returns normally."""
    source, _, _ = attach(session)
    end_stream(session, source, "on_error", after=2, rule_if_raises="2.10")


@rule("2.11", needs={"subscriber", "observer"})
def every_signal_is_processed_once_in_order(session):
    """2.11 (white box): each signal is processed at most once, in the order it was signalled, and none
    is lost: a subscriber that hands signals to its processing without a happens-before edge loses,
    repeats or reorders them. Elements go in bursts, as much as the demand allows, to give such a
    hand-off the chance to fail. A subscriber that cancels of its own accord may leave what arrives
    after it unprocessed (2.8)."""
    source, _, observer = attach(session, observed=True)
    delivered = feed(session, source, STREAM, burst=True, after_cancel=1)
    subscription = source.subscription
    if not subscription.cancelled and source.can_signal():
        source.send_complete()
    session.settle()
    terminal_was_sent = subscription.terminal == "on_complete"

    def all_processed() -> bool:  # or cancelled, after which what arrives may be left unprocessed (2.8)
        kinds = [kind for kind, _ in observer.processed]
        return subscription.cancelled or (kinds.count("on_next") >= delivered
                                          and (not terminal_was_sent or "on_complete" in kinds))

    if not all_processed():  # where a quiet window settled, processing still under way is not judged early
        session.settler.await_signal(all_processed, session.deadline)
    sent_items = list(range(delivered))
    processed_items = [value for kind, value in observer.processed if kind == "on_next"]
    kinds = [kind for kind, _ in observer.processed]
    terminal_sent = ["on_complete"] if terminal_was_sent else []
    expected = f"on_subscribe, then {len(sent_items)} elements in order, each once"
    claim = session.evidence.claim("processed_in_order", observer=observer, source=source)
    if kinds[:1] != ["on_subscribe"] or kinds.count("on_subscribe") != 1:
        raise RuleViolation("2.11", expected, f"processed {kinds[:3]} first", claim=claim)
    if processed_items != sent_items[:len(processed_items)]:
        first = next((i for i, (a, b) in enumerate(zip(processed_items, sent_items)) if a != b),
                     min(len(processed_items), len(sent_items)))
        raise RuleViolation("2.11", expected, f"processing diverged at element {first + 1}: processed "
                                              f"{show(processed_items[first:first + 3])}", claim=claim)
    if not subscription.cancelled and len(processed_items) < len(sent_items):
        raise RuleViolation("2.11", expected, f"only {len(processed_items)} processed, and it never cancelled"
                            + session.quiet_note(), claim=claim)
    terminal_processed = [kind for kind in kinds if kind in ("on_complete", "on_error")]
    if terminal_processed != terminal_sent and not (subscription.cancelled and not terminal_processed):
        raise RuleViolation("2.11", f"the terminal signal processed once ({', '.join(terminal_sent) or 'none sent'})",
                            f"processed {', '.join(terminal_processed) or 'none'}", claim=claim)


@rule("2.12", needs={"publisher"})
def on_subscribe_is_signalled_once(session):
    """2.12 (the publisher's side): one subscribe brings one on_subscribe, never a second, whatever
    follows. The kit never subscribes the same subscriber twice: 1.10 forbids that to callers."""
    n = session.elements(5, at_least=0)
    probe = session.subscribe(session.create_publisher(n))
    probe.request(1)
    session.settle()
    probe.request(n)
    session.settle()


@rule("2.13", needs={"subscriber", "null_arguments"})
def null_arguments_raise_type_error(session):
    """2.13: on_subscribe(None), on_next(None) and on_error(None) raise the profile's type error."""
    source, subscriber, _ = attach(session)
    label = session.labels.of(subscriber)
    for method in ("on_subscribe", "on_next", "on_error"):
        session.calls.expecting_error(subscriber, method, (None,), error_type=session.error_names.type_error,
                                      rule="2.13", actor=label)
    session.settle()


@rule("2.13")
def signal_methods_return_normally(session):
    """2.13: on_subscribe, on_next and on_complete return normally through a whole stream."""
    source, _, _ = attach(session)
    end_stream(session, source, "on_complete", after=8)


def _raise_from_on_next(session):
    probe = session.subscribe(session.create_publisher(session.elements(10, at_least=3)), fail_on_next=True)
    probe.request(5)
    session.settle()
    return probe


@rule("2.13", needs={"publisher"})
def publisher_treats_a_raising_subscriber_as_cancelled(session):
    """2.13 (the publisher's side): after on_next raised, the subscription counts as cancelled and no
    further signal follows, not even once the subscriber requests again (a request on a cancelled
    subscription, which 3.6 makes a NOP). The probe breaks 2.13 on purpose here; its error coming back out
    of the publisher's calls is how a synchronous publisher surfaces it, never a fault of the publisher."""
    probe = _raise_from_on_next(session)
    if probe.failed_on_purpose and not probe.terminated:
        probe.request(5, rule_if_raises="2.13")  # any signal it draws is charged to 2.13 (the probe's silence)
        session.settle()


@rule("2.13.surfaced", needs={"publisher"})
def publisher_surfaces_the_subscribers_error(session):
    """2.13 (the caller's duty): the error a subscriber raised is made known: raised back to the caller of
    the call that delivered it, logged, or handed to a thread's or an event loop's exception hook. Any of
    these passes; swallowed without a trace is a warn (a fashion the kit cannot see is possible)."""
    probe = _raise_from_on_next(session)
    if probe.failed_on_purpose and not session.surfacing.surfaced:
        raise RuleViolation("2.13.surfaced", "the subscriber's error raised to the caller, logged, or handed to "
                            "an exception hook", "nothing showed it: it was swallowed" + session.quiet_note(),
                            claim=session.evidence.claim("surfaced", probe=probe))


@rule("3.1", needs={"subscriber"})
def subscription_is_called_only_by_its_own_subscriber(session):
    """3.1: with two subscribers of the same kind, a call on one's subscription while the kit is
    signalling the other is made outside its subscriber's context."""
    pairs = [attach(session)[:2] for _ in range(2)]
    for n in range(8):
        for source, _subscriber in pairs:
            if not source.subscription.terminal and not source.subscription.cancelled:
                source.send_available([n], limit=1)
        session.settle()


@rule("2.7", needs={"subscriber", "threads"})
def subscription_calls_are_serial_while_the_kit_lingers(session):
    """2.7 with the window held open (rstck.core.perturb): each request or cancel the subscriber makes lingers in the
    kit's subscription until the subscriber's own threads have done what they can, so a call one of them makes
    meanwhile overlaps it, on a quiet machine as on a loaded one. Targets without kit-callable threads are n/a."""
    source, _, _ = attach(session, linger_in_calls=True)
    feed(session, source, STREAM)
