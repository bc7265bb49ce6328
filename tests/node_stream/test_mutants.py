"""Every JavaScript stream mutant (tests/node_stream/mutants/*.js) is caught on exactly its items: fail for a MUST
item, warn for a SHOULD item; and every node.* and jsgi.* item that has a check has a mutant that its check
catches.

A mutant requires the shipped reference (rstck/reference/js/streams.js) and changes one behaviour; it exports
only the factory it changes (and `Stream`, which the instanceof items look for), so only the checks of that
kind of stream run. Where one item cannot break without another (the same observation, or a list item whose
members are items of their own), the other items are listed too. The mutants run with isolation "reuse" (a
process serves consecutive checks), and no process started ahead, to keep this suite short."""

from __future__ import annotations

import os

import pytest

from rstck.core.checks import all_checks

from ..node.helpers import Mutant, assert_caught_on_exactly, mutant
from .helpers import here, node_stream_target, run

pytestmark = pytest.mark.node

STREAM_SPECS = ("node.", "jsgi.")


MUTANTS = [
    # The Stream base class (createStream).
    mutant("base_write_after_end", "node.base.2"),
    mutant("base_write_throws", "node.base.3 node.base.6"),  # end('z') passes its chunk to the throwing write()
    mutant("base_write_rejects_callback", "node.base.3"),
    mutant("base_write_callback_sync", "node.base.4"),
    mutant("base_end_twice", "node.base.5"),
    mutant("base_end_throws", "node.base.6"),
    mutant("base_end_callback_sync", "node.base.7"),
    mutant("base_flush_after_end", "node.base.8"),
    mutant("base_flush_throws", "node.base.9"),
    mutant("base_flush_callback_sync", "node.base.10"),
    mutant("base_destroy_twice", "node.base.11"),
    mutant("base_destroy_guard_late", "node.base.11"),  # destroy(); destroy(); in one go emits destroy twice
    mutant("base_pipe_returns_source", "node.base.12"),
    # Writable streams (createWritable).
    mutant("writable_not_a_stream", warns="node.writable.1"),
    mutant("writable_no_flag", "node.writable.2 node.writable.3"),  # a missing flag is not true either
    mutant("writable_flag_false", "node.writable.3"),
    mutant("writable_flag_stays_true", "node.writable.4"),
    mutant("writable_write_always_false", warns="node.writable.5"),
    mutant("writable_write_never_false", "node.writable.6"),
    mutant("writable_drain_too_early", "node.writable.7 node.writable.25"),  # one sentence, said twice
    # 24 lists drain among the events a writable must have; 15 wants drain after end() said false.
    mutant("writable_no_drain", "node.writable.7 node.writable.15 node.writable.24 node.writable.25"),
    mutant("writable_callback_before_written", "node.writable.8"),
    mutant("writable_writes_synchronously", "node.writable.9"),
    mutant("writable_write_after_end", warns="node.writable.10"),
    mutant("writable_end_drops_chunk", "node.writable.11"),
    mutant("writable_end_callback_dropped", "node.writable.12"),
    mutant("writable_end_chunk_callback_dropped", "node.writable.12"),  # end('b', cb): cb never called
    mutant("writable_second_end_callback_dropped", "node.writable.12"),  # a second end(cb) returns, never calls cb
    mutant("writable_end_always_true", "node.writable.13"),
    mutant("writable_end_always_false", warns="node.writable.14"),
    mutant("writable_end_false_no_drain", "node.writable.15"),
    mutant("writable_no_destroy_event", "node.writable.16 node.writable.24"),  # 24 lists destroy among the events
    mutant("writable_destroy_callback_dropped", "node.writable.17"),
    mutant("writable_destroy_callback_sync", "node.writable.18"),
    mutant("writable_no_flush", warns="node.writable.19"),
    mutant("writable_flush_always_true", "node.writable.20"),
    mutant("writable_flush_always_false", warns="node.writable.21"),
    mutant("writable_flush_callback_early", "node.writable.22"),
    mutant("writable_flush_callback_sync", "node.writable.23"),
    mutant("writable_no_close", warns="node.writable.27"),
    # Readable streams (createReadable; the pipe mutant also createWritable, the destination).
    mutant("readable_not_a_stream", warns="node.readable.1"),
    mutant("readable_no_pipe", "node.readable.2"),
    mutant("readable_flag_false", "node.readable.3"),
    mutant("readable_flag_stays_true", "node.readable.4"),
    mutant("readable_pause_ignored", warns="node.readable.5"),
    mutant("readable_resume_once", "node.readable.6"),
    mutant("readable_pipe_returns_source", "node.readable.9"),
    mutant("readable_no_destroy_event", "node.readable.10"),
    mutant("readable_destroy_twice", "node.readable.11"),
    # 11 (destroy(); destroy(); in one go, and again once settled) sees what 12 sees: a throw, an error event.
    mutant("readable_destroy_twice_throws", "node.readable.11 node.readable.12"),
    mutant("readable_destroy_while_destroying", "node.readable.11 node.readable.12"),
    # 13 is data then end; the flag (4) turns false at end.
    mutant("readable_never_ends", "node.readable.4 node.readable.13 node.readable.17"),
    mutant("readable_skips_first_chunk", "node.readable.14"),
    mutant("readable_data_without_chunk", "node.readable.14 node.readable.15"),  # the empty event is a data event
    mutant("readable_end_before_last_chunk", "node.readable.17"),
    mutant("readable_no_end_when_destroyed", "node.readable.18"),
    mutant("readable_no_close_after_end", warns="node.readable.19"),
    mutant("readable_no_close_when_destroyed", warns="node.readable.20"),
    mutant("guidelines_no_end_when_destroyed_flowing", "node.guidelines.1"),
    # Filter streams (createFilter).
    mutant("filter_no_allow_half_open", "node.filter.2", warns="node.filter.1"),  # a missing flag is not true
    mutant("filter_allow_half_open_false", "node.filter.2"),
    mutant("filter_no_pause_event", warns="node.filter.3"),
    mutant("filter_no_resume_event", warns="node.filter.4"),
    mutant("filter_destroy_without_end", "node.filter.5"),
    mutant("filter_destroy_twice", "node.filter.6"),
    # Duplex streams (createDuplex).
    mutant("duplex_half_open_without_flag", "node.duplex.1 node.duplex.3"),  # allowHalfOpen false: 3 applies
    mutant("duplex_end_leaves_readable", "node.duplex.3"),
    mutant("duplex_destroy_event_late", "node.duplex.4"),
    mutant("duplex_destroy_event_next_iteration", "node.duplex.4"),  # a setImmediate is not immediate either
    mutant("duplex_destroy_callback_dropped", "node.duplex.5"),
    mutant("duplex_destroy_callback_sync", "node.duplex.6"),
    mutant("duplex_destroy_twice", "node.duplex.7"),
    # The JSGI stream (createJsgiStream).
    mutant("jsgi_write_after_close", "jsgi.methods.1"),
    mutant("jsgi_write_synchronous", "jsgi.methods.2 jsgi.timing.1 jsgi.timing.2"),  # data inside write()
    mutant("jsgi_last_write_first", "jsgi.methods.3"),
    mutant("jsgi_writes_after_close", "jsgi.methods.4"),
    mutant("jsgi_pause_ignored", "jsgi.methods.5 jsgi.methods.6"),  # nothing is left for resume() to deliver
    mutant("jsgi_resume_ignored", "jsgi.methods.6"),
    mutant("jsgi_no_add_listener", "jsgi.methods.7"),  # every check needs it, and charges its absence to 7
    mutant("jsgi_data_wrapped", "jsgi.events.1 jsgi.methods.3"),  # 3 compares the data too
    mutant("jsgi_no_eof", "jsgi.events.2"),
    mutant("jsgi_no_drain", "jsgi.events.3"),
    mutant("jsgi_no_pause_event", "jsgi.events.4"),
    mutant("jsgi_no_resume_event", "jsgi.events.5"),
    mutant("jsgi_pause_resume_sync", "jsgi.timing.1"),
    mutant("jsgi_eof_sync", "jsgi.timing.1 jsgi.timing.2"),  # 2's events are among 1's
    mutant("jsgi_no_resume", "jsgi.events.5 jsgi.methods.6", warns="jsgi.readwrite.1"),  # resume() throws
]

@pytest.mark.parametrize("case", MUTANTS, ids=lambda case: case.module)
def test_caught_on_exactly_its_items(case: Mutant):
    with node_stream_target(here("mutants", f"{case.module}.js"), isolation="reuse", spares=0) as target:
        results = run(target)
    assert_caught_on_exactly(case, results)


def test_every_checked_stream_item_has_a_mutant_that_its_check_catches():
    checked = {c.rule for c in all_checks() if c.rule.startswith(STREAM_SPECS)}
    caught = set().union(*(case.fails | case.warns for case in MUTANTS))
    assert checked - caught == set(), "checked items without a mutant"
    assert caught - checked == set(), "mutants name items that have no check"


def test_every_mutant_module_is_listed():
    listed = {case.module for case in MUTANTS}
    on_disk = {name[:-3] for name in os.listdir(here("mutants")) if name.endswith(".js")}
    assert on_disk == listed
