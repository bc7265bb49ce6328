"""Every failing finding of the network zoo gets a standalone reproducer, a Python script that speaks the protocol
itself, that exits 1 against the mutant that produced it and 0 against a conformant peer: the reference server for
the mutant servers (tests/network/mutant_servers.py), a correct client for the mutant clients
(tests/network/clients/mutant_client.py)."""

from __future__ import annotations

import pytest

from rstck.adapters.network.client_target import NetworkClientTarget
from rstck.core.target import load_target
from rstck.reports.repro import write_reproducers

from ..network.mutant_servers import MUTANTS, RunningServer
from ..network.test_client_checks import CASES, HANG_TIMEOUT_S, TIMEOUT_S, mutant
from .helpers import EXIT_BROKEN, EXIT_KEPT, assert_reproduces, rows_of, run_script

pytestmark = pytest.mark.network

SERVER_TIMEOUT_S = 3.0  # as tests/network's mutant servers: the reference server never comes near it
FIXED_CLIENT = mutant("none")  # the mutants' own baseline: each differs from it by its defect only
# Mutants that stop serving once the kit reset a connection (net.closing.1): the server is down, or refuses what comes
# next, when the kit would confirm the script, so the script is kept unconfirmed, says why, and is run here against a
# fresh server.
LEFT_DOWN = {"refuses after a reset": "net.closing.1", "dies on a reset": "net.closing.1"}


@pytest.mark.parametrize("case", MUTANTS, ids=lambda case: case.name)
def test_every_finding_of_a_mutant_server_has_a_reproducer_that_fails_it_and_passes_the_reference(case, tmp_path):
    server = RunningServer(case.server, **dict(case.options))
    try:
        rows = rows_of(load_target(server.url), SERVER_TIMEOUT_S, case.rules or case.item)
        made = write_reproducers(rows, tmp_path)
        assert made, "a mutant has findings"
        reference = RunningServer()
        try:
            if case.name in LEFT_DOWN:
                assert_reproduces_once_restarted(made, case, reference.url)
            else:
                assert_each_reproduces(made, reference.url)
        finally:
            reference.stop()
    finally:
        server.stop()


def assert_reproduces_once_restarted(made, case, fixed: str) -> None:
    [found] = made
    assert (found.row["violated"], found.path is not None) == (LEFT_DOWN[case.name], True), found.reason
    assert "stopped serving" in found.unconfirmed and "restart the server" in found.unconfirmed, found.unconfirmed
    fresh = RunningServer(case.server, **dict(case.options))
    try:
        broken = run_script(found, fresh.url)
    finally:
        fresh.stop()
    assert broken.returncode == EXIT_BROKEN and f"BROKEN {LEFT_DOWN[case.name]}:" in broken.stdout, broken.stdout
    assert run_script(found, fixed).returncode == EXIT_KEPT, found.path


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.mutant)
def test_every_finding_of_a_mutant_client_has_a_reproducer_that_fails_it_and_passes_a_correct_client(case, tmp_path):
    target = NetworkClientTarget(mutant(case.mutant))
    rows = [row for row in rows_of(target, HANG_TIMEOUT_S if case.hangs else TIMEOUT_S,
                                   case.rules or ",".join(case.charged))
            if not case.checks or row["check"] in case.checks]
    made = write_reproducers(rows, tmp_path)
    if not made:
        pytest.skip(f"{case.mutant} has no failing finding (its item is {case.charged})")
    assert_each_reproduces(made, FIXED_CLIENT)


def assert_each_reproduces(made, fixed: str) -> None:
    """Each finding has a script, which fails its mutant and passes the fixed peer (a URL, or a client command)."""
    for found in made:
        assert found.path is not None, f"{found.row['violated']} ({found.row['check']}): {found.reason}"
        assert_reproduces(found, fixed)
