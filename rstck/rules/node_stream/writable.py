"""Writable streams (node.writable.*), checked on createWritable({highWaterMark, written}): the writable flag,
write() and its queue (false once more chunks wait than the high-water mark, then drain), callbacks that come
once the chunk is written and never inside the call, end(), destroy(), flush() and the events.

A chunk waits in the queue from its write() until the writable reports it written (options.written); a burst
of writes (nothing of Node's loop between them) is how the queue is filled."""

from __future__ import annotations

from rstck.core.verdict import NotApplicable, RuleViolation
from rstck.core.checks import untested
from rstck.rules.node_stream import (HIGH_WATER_MARK, claim, expect_call_emits, expect_callback_called,
                                     expect_callback_not_synchronous, expect_called, expect_emitted, expect_flag,
                                     expect_flag_false_once_destroyed, expect_members, expect_no_throw, expect_returned,
                                     expect_throw_after, instance_of_stream, require_method, rule, new_writable, text_of,
                                     unless, written_chunks)

untested("node.writable.26", "the heading of a list whose one entry is close, node.writable.27, checked there")


def _burst_of_writes(streams, stream, count: int, then: tuple = (), *, drain: bool = False):
    """`count` writes (x0, x1, ...) in one burst, and `then` (method, args) after them in the same burst. With
    `drain`, the burst ends with on('drain', listener), as a user who waits for drain after a false write() does:
    a stream may emit 'drain' only while somebody listens (the emit patch observes it either way)."""
    calls = [(stream, "write", (f"x{k}",)) for k in range(count)] + [(stream, method, args) for method, args in then]
    if drain:
        calls.append((stream, "on", ("drain", streams.callback("drain"))))
    outcomes = streams.burst(calls)
    return outcomes[:-1] if drain else outcomes


def _waiting(streams, written, outcomes, k: int, writes: int) -> int:
    """How many of the burst's writes (its first `writes` calls) up to call k had not been reported written
    when call k returned."""
    done = [e for e in streams.calls_of(written) if e.in_op == outcomes[k].op and e.call is not None and e.call <= k]
    return min(k + 1, writes) - len(done)


def _filled(streams, rule, *, drain: bool = False):
    """A writable whose queue was filled past its high-water mark in one burst: (stream, written, outcomes);
    `drain`: with a 'drain' listener added at the end of the burst."""
    stream, written = new_writable(streams)
    outcomes = _burst_of_writes(streams, stream, 3 * HIGH_WATER_MARK, drain=drain)
    for outcome in outcomes:
        expect_no_throw(rule, outcome)
    return stream, written, outcomes


def _drain_after_false(streams, rule):
    stream, written, outcomes = _filled(streams, rule, drain=True)
    falses = [o for o in outcomes if o.ret is False]
    if not falses:
        raise NotApplicable("no write() returned false (node.writable.6 judges whether one had to)")
    judged = claim("drain_after_false", of=stream, calls=outcomes, written=written)
    drains = expect_emitted(streams, rule, stream, "drain", f"after {falses[-1].text} returned false",
                            after=falses[-1].seq - 1, judged=judged)
    last_written = streams.calls_of(written)
    if last_written and drains[-1].seq < last_written[-1].seq:
        raise RuleViolation(rule, "drain once the queue is emptied", f"the last drain (#{drains[-1].seq}) came before "
                            f"the last chunk was written (#{last_written[-1].seq})", claim=judged)
    return stream


def _returns_false_while_chunks_wait(streams, rule, method):
    """Two writes and `method`() in one burst: while chunks wait, `method`() returns false."""
    stream, written = new_writable(streams)
    if method == "flush":  # optional: node.writable.19 (SHOULD) judges its absence
        require_method(streams, stream, method, "node.writable.19 judges that")
    outcomes = _burst_of_writes(streams, stream, 2, then=((method, ()),))
    last = outcomes[-1]
    expect_no_throw(rule, last)
    if _waiting(streams, written, outcomes, len(outcomes) - 1, 2) == 0:
        streams.settle()
        raise NotApplicable(f"the writable had written every chunk by the time {method}() returned: no chunk waited")
    if last.ret is not False:
        raise RuleViolation(rule, f"{method}() to return false while chunks wait", last.shown(),
                            claim=claim("false_while_waiting", calls=outcomes, written=written, writes=2))
    streams.settle()


def _returns_true_on_an_empty_queue(streams, rule, method):
    """`method`() on a fresh writable (nothing queued) returns true."""
    stream, _ = new_writable(streams)
    if method == "flush":  # optional: node.writable.19 (SHOULD) judges its absence
        require_method(streams, stream, method, "node.writable.19 judges that")
    outcome = streams.call(stream, method)
    expect_no_throw(rule, outcome)
    streams.settle()
    expect_returned(rule, outcome, True, f"{method}() to return true with an empty queue")


@rule("node.writable.1")
def is_an_instance_of_the_stream_base_class(streams):
    """node.writable.1 (SHOULD): the writable is an instance of Node's Stream, the module's Stream, or the class
    of createStream()."""
    instance_of_stream(streams, "node.writable.1", new_writable(streams)[0])


@rule("node.writable.2")
def has_the_writable_members(streams):
    """node.writable.2: the writable has the writable flag, write(), end() and destroy()."""
    expect_members(streams, "node.writable.2", new_writable(streams)[0], ("writable",), ("write", "end", "destroy"))


@rule("node.writable.3")
def writable_flag_is_true(streams):
    """node.writable.3: a fresh writable's writable flag is true."""
    expect_flag(streams, "node.writable.3", new_writable(streams)[0], "writable", True, "on a fresh writable")


@rule("node.writable.4")
def writable_flag_is_false_once_ended(streams):
    """node.writable.4: once end() has returned, the writable flag is false (Node's reading of "ended": end()
    was called), and stays so."""
    stream, _ = new_writable(streams)
    expect_no_throw("node.writable.4", streams.call(stream, "write", "a"))
    expect_no_throw("node.writable.4", streams.call(stream, "end"))
    expect_flag(streams, "node.writable.4", stream, "writable", False, "once end() has returned")
    streams.settle_or("node.writable.4", "end() to complete")
    expect_flag(streams, "node.writable.4", stream, "writable", False, "once ended")


@rule("node.writable.4")
def writable_flag_is_false_once_destroyed(streams):
    """node.writable.4: once destroy() has returned, the writable flag is false, and stays so."""
    expect_flag_false_once_destroyed(streams, "node.writable.4", new_writable(streams)[0], "writable")


@rule("node.writable.5")
def first_write_returns_true(streams):
    """node.writable.5 (SHOULD): the first write to a fresh writable, far below its high-water mark, returns
    true."""
    stream, _ = new_writable(streams)
    outcome = streams.call(stream, "write", "a")
    expect_no_throw("node.writable.5", outcome)
    expect_returned("node.writable.5", outcome, True, f"{outcome.text} to return true")
    streams.settle()


@rule("node.writable.6")
def write_returns_false_once_the_queue_is_full(streams):
    """node.writable.6: in a burst of 3 x highWaterMark writes, every write after which more chunks wait than the
    high-water mark returns false (a writable that writes each chunk at once never has to)."""
    stream, written, outcomes = _filled(streams, "node.writable.6")
    for k, outcome in enumerate(outcomes):
        waiting = _waiting(streams, written, outcomes, k, len(outcomes))
        if waiting > HIGH_WATER_MARK and outcome.ret is not False:
            raise RuleViolation("node.writable.6", f"write() to return false once more than {HIGH_WATER_MARK} "
                                "chunks wait", f"{outcome.text} {outcome.shown()} with {waiting} chunks waiting",
                                claim=claim("false_once_full", calls=outcomes, written=written,
                                            high_water_mark=HIGH_WATER_MARK))
    streams.settle()


@rule("node.writable.7")
def drain_follows_a_false_write(streams):
    """node.writable.7: after a write() returned false, drain is emitted, once the last chunk is written."""
    _drain_after_false(streams, "node.writable.7")


@rule("node.writable.8")
def write_callback_comes_once_written(streams):
    """node.writable.8: write('a', cb): cb is called, after the writable reported 'a' written."""
    stream, written = new_writable(streams)
    cb = streams.callback()
    expect_no_throw("node.writable.8", streams.call(stream, "write", "a", cb))
    calls = expect_called(streams, "node.writable.8", cb, "once 'a' is written")
    reported = [e for e in streams.calls_of(written) if e.args and text_of(e.args[0]) == "a"]
    if reported and calls[0].seq < reported[0].seq:
        raise RuleViolation("node.writable.8", "the callback once the chunk is completely written",
                            f"#{calls[0].seq} called before 'a' was reported written (#{reported[0].seq})",
                            claim=claim("called_after_written", callback=cb, written=written, chunk="a"))


@rule("node.writable.9")
def write_callback_not_before_next_tick(streams):
    """node.writable.9: write('a', cb): cb is not called inside the write() call."""
    expect_callback_not_synchronous(streams, "node.writable.9", new_writable(streams)[0], "write", ("a",),
                                    "the write to complete", "the write callback")


@rule("node.writable.10")
def write_after_end_throws(streams):
    """node.writable.10 (SHOULD): end(), then write('x'): the write throws."""
    expect_throw_after(streams, "node.writable.10", new_writable(streams)[0], "end", "after end()")


@rule("node.writable.11")
def end_writes_its_chunk(streams):
    """node.writable.11: write('a'), end('b'): 'b' is written like a write() of it, after 'a' (Node's reading
    of "passed to this.write()": docs/decisions.md)."""
    stream, written = new_writable(streams)
    expect_no_throw("node.writable.11", streams.call(stream, "write", "a"))
    expect_no_throw("node.writable.11", streams.call(stream, "end", "b"))
    streams.settle_or("node.writable.11", "'a' and 'b' to be written")
    chunks = written_chunks(streams, written)
    if chunks != ["a", "b"]:
        raise RuleViolation("node.writable.11", "'a', then end()'s chunk 'b', written", f"written: {chunks!r}",
                            claim=claim("written", written=written, chunks=["a", "b"]))


@rule("node.writable.12")
def end_callback_is_called(streams):
    """node.writable.12: write('a'), end(cb): cb is called (once the queue is flushed, or on nextTick)."""
    stream, _ = new_writable(streams)
    expect_no_throw("node.writable.12", streams.call(stream, "write", "a"))
    expect_callback_called(streams, "node.writable.12", stream, "end", (), "after end(cb)")


@rule("node.writable.12")
def end_with_a_chunk_calls_its_callback(streams):
    """node.writable.12: write('a'), end('b', cb): cb, the last argument, is called too."""
    stream, _ = new_writable(streams)
    expect_no_throw("node.writable.12", streams.call(stream, "write", "a"))
    expect_callback_called(streams, "node.writable.12", stream, "end", ("b",), "after end('b', cb)")


@rule("node.writable.12")
def a_second_end_calls_its_callback(streams):
    """node.writable.12: end(cb1), settled, then end(cb2): a second end() that returns normally calls its callback
    as well (with an error or not); one that throws has refused the call, and its callback is owed nothing."""
    stream, _ = new_writable(streams)
    expect_no_throw("node.writable.12", streams.call(stream, "write", "a"))
    expect_callback_called(streams, "node.writable.12", stream, "end", (), "after end(cb)")
    second = streams.callback()
    outcome = streams.call(stream, "end", second)
    unless(streams, "raised", call=outcome)
    if outcome.raised:
        streams.settle()
        streams.note(f"the second end() threw ({outcome.shown()}): it refused the call, so its callback is owed "
                     "nothing")
        return
    expect_called(streams, "node.writable.12", second, "after a second end(cb) that returned normally")


@rule("node.writable.13")
def end_returns_false_while_chunks_wait(streams):
    """node.writable.13: writes and end() in one burst: while chunks wait, end() returns false."""
    _returns_false_while_chunks_wait(streams, "node.writable.13", "end")


@rule("node.writable.14")
def end_returns_true_on_an_empty_queue(streams):
    """node.writable.14 (SHOULD): end() on a fresh writable (nothing queued) returns true."""
    _returns_true_on_an_empty_queue(streams, "node.writable.14", "end")


@rule("node.writable.15")
def drain_follows_a_false_end(streams):
    """node.writable.15: writes and end() in one burst; if end() returned false, drain is emitted later."""
    stream, _ = new_writable(streams)
    outcomes = _burst_of_writes(streams, stream, 2, then=(("end", ()),), drain=True)
    end = outcomes[-1]
    if end.ret is not False:
        streams.settle()
        raise NotApplicable(f"end() did not return false ({end.shown()})")
    expect_emitted(streams, "node.writable.15", stream, "drain", "after end() returned false", after=end.seq - 1,
                   judged=claim("drain_after_false", of=stream, calls=[end]))


@rule("node.writable.16")
def destroy_emits_destroy(streams):
    """node.writable.16: destroy() on a fresh writable emits destroy."""
    expect_call_emits(streams, "node.writable.16", new_writable(streams)[0], "destroy", "destroy", "after destroy()")


@rule("node.writable.17")
def destroy_callback_is_called(streams):
    """node.writable.17: destroy(cb): cb is called."""
    expect_callback_called(streams, "node.writable.17", new_writable(streams)[0], "destroy", (),
                           "once destroy() has cleaned up")


@rule("node.writable.18")
def destroy_callback_not_before_next_tick(streams):
    """node.writable.18: destroy(cb): cb is not called inside the destroy() call."""
    expect_callback_not_synchronous(streams, "node.writable.18", new_writable(streams)[0], "destroy", (),
                                    "destroy() to complete", "the destroy callback")


@rule("node.writable.19")
def has_flush(streams):
    """node.writable.19 (SHOULD): the writable has flush()."""
    expect_members(streams, "node.writable.19", new_writable(streams)[0], (), ("flush",))


@rule("node.writable.20")
def flush_returns_false_while_chunks_wait(streams):
    """node.writable.20: writes and flush() in one burst: while chunks wait, flush() returns false."""
    _returns_false_while_chunks_wait(streams, "node.writable.20", "flush")


@rule("node.writable.21")
def flush_returns_true_on_an_empty_queue(streams):
    """node.writable.21 (SHOULD): flush() on a fresh writable (nothing queued) returns true."""
    _returns_true_on_an_empty_queue(streams, "node.writable.21", "flush")


@rule("node.writable.22")
def flush_callback_comes_once_the_queue_is_empty(streams):
    """node.writable.22: writes and flush(cb) in one burst: cb is called, after the last chunk was written."""
    stream, written = new_writable(streams)
    require_method(streams, stream, "flush", "node.writable.19 judges that")
    cb = streams.callback()
    outcomes = _burst_of_writes(streams, stream, 2, then=(("flush", (cb,)),))
    expect_no_throw("node.writable.22", outcomes[-1])
    calls = expect_called(streams, "node.writable.22", cb, "once the write queue is emptied")
    reported = streams.calls_of(written)
    if len(reported) >= 2 and calls[0].seq < reported[1].seq:
        raise RuleViolation("node.writable.22", "the flush callback once the write queue is emptied",
                            f"#{calls[0].seq} called before the last chunk was written (#{reported[1].seq})",
                            claim=claim("called_after_written", callback=cb, written=written, nth=2))


@rule("node.writable.23")
def flush_callback_not_before_next_tick(streams):
    """node.writable.23: flush(cb) on a fresh writable: cb is not called inside the flush() call."""
    stream, _ = new_writable(streams)
    require_method(streams, stream, "flush", "node.writable.19 judges that")
    expect_callback_not_synchronous(streams, "node.writable.23", stream, "flush", (), "flush() to complete",
                                    "the flush callback")


@rule("node.writable.24")
def implements_drain_and_destroy(streams):
    """node.writable.24: the events of the list: drain after a write() that returned false, destroy after
    destroy()."""
    stream, _, outcomes = _filled(streams, "node.writable.24", drain=True)
    if any(o.ret is False for o in outcomes):
        expect_emitted(streams, "node.writable.24", stream, "drain", "after a write() returned false",
                       judged=claim("drain_after_false", of=stream, calls=outcomes, anytime=True))
    mark = streams.mark()
    expect_no_throw("node.writable.24", streams.call(stream, "destroy"))
    expect_emitted(streams, "node.writable.24", stream, "destroy", "after destroy()", after=mark)


@rule("node.writable.25")
def drain_when_the_queue_is_drained(streams):
    """node.writable.25: after a write() returned false, drain is emitted once the queue is drained."""
    _drain_after_false(streams, "node.writable.25")


@rule("node.writable.27")
def close_after_destroy(streams):
    """node.writable.27 (SHOULD): after destroy() has cleaned up, the writable emits close."""
    expect_call_emits(streams, "node.writable.27", new_writable(streams)[0], "destroy", "close",
                      "once destroy() has cleaned up")

