"""Every failing finding of the network zoo gets a standalone reproducer, a Python script that speaks the protocol
itself, that exits 1 against the mutant that produced it and 0 against a conformant peer: the reference server for
the mutant servers (tests/network/mutant_servers.py), a correct client for the mutant clients
(tests/network/clients/mutant_client.py)."""

from __future__ import annotations

import pytest

from rstck.adapters.network.client_target import NetworkClientTarget
from rstck.execution.plan import plan
from rstck.execution.runner import run_check
from rstck.reports.repro import write_reproducers

from ..network.mutant_servers import MUTANTS, RunningServer, take_serving_run
from ..network.test_client_checks import CASES, HANG_TIMEOUT_S, TIMEOUT_S, mutant
from .helpers import EXIT_BROKEN, EXIT_KEPT, assert_confirmed_reproduces, run_script

pytestmark = pytest.mark.network

FIXED_CLIENT = mutant("none")  # the mutants' own baseline: each differs from it by its defect only
# Mutants that stop serving once the kit reset a connection (net.closing.1): the server is down, or refuses what comes
# next, when the kit would confirm the script, so the script is kept unconfirmed, says why, and is run here against a
# fresh server.
LEFT_DOWN = {"refuses after a reset": "net.closing.1", "dies on a reset": "net.closing.1"}


# With the verdicts' test (tests/network/test_server_checks.py) on one worker: each mutant's checks run once for both.
@pytest.mark.xdist_group("network-mutant-servers")
def _half_in_the_soak(cases: list, name) -> list:
    """Every other case in the suite, each one in the soak: the writer's paths are shared among them."""
    return [pytest.param(case, id=name(case), marks=[pytest.mark.soak] if index % 2 else [])
            for index, case in enumerate(cases)]


@pytest.mark.parametrize("case", _half_in_the_soak(MUTANTS, lambda case: case.name))
def test_every_finding_of_a_mutant_server_has_a_reproducer_that_fails_it_and_passes_the_reference(case, tmp_path):
    rows, server = take_serving_run(case)  # the server the rows came from, up: the scripts are confirmed against it
    try:
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


@pytest.mark.parametrize("case", _half_in_the_soak(CASES, lambda case: case.mutant))
def test_every_finding_of_a_mutant_client_has_a_reproducer_that_fails_it_and_passes_a_correct_client(case, tmp_path):
    target = NetworkClientTarget(mutant(case.mutant))
    planned = [p for p in plan(target, rules=case.rules or ",".join(case.charged))
               if not case.checks or p.check.name in case.checks]  # the others' rows would be left out: not run
    rows = [run_check(p.check, p.target, timeout_s=HANG_TIMEOUT_S if case.hangs else TIMEOUT_S).row()
            for p in planned]
    made = write_reproducers(rows, tmp_path)
    if not made:
        pytest.skip(f"{case.mutant} has no failing finding (its item is {case.charged})")
    assert_each_reproduces(made, FIXED_CLIENT)


def assert_each_reproduces(made, fixed: str) -> None:
    """Each finding has a script, which fails its mutant (the kit's confirming run) and passes the fixed peer (a URL,
    or a client command)."""
    for found in made:
        assert_confirmed_reproduces(found, fixed)
