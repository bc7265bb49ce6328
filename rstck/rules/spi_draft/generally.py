"""Generally: spi.generally.1."""

from __future__ import annotations

import time

from rstck.core.verdict import RuleViolation
from rstck.core.checks import rule
from rstck.rules.spi_draft.probe import subscribe


@rule("spi.generally.1")
def request_more_and_cancel_return_promptly(session):
    """spi.generally.1 (SHOULD): requestMore and cancel return within the responsiveness bound (as 3.4
    reads "in a timely manner"); a call that never returns is charged here too."""
    probe = subscribe(session, session.create_publisher(session.elements(4, at_least=2)))
    slowest = 0.0
    for call in (lambda: probe.request(1), lambda: probe.request(1), probe.cancel):
        started = time.perf_counter()
        call()
        slowest = max(slowest, time.perf_counter() - started)
        session.settle()
    if slowest > session.responsiveness_bound_s:
        raise RuleViolation("spi.generally.1", f"requestMore and cancel to return within "
                            f"{session.responsiveness_bound_s:g} s", f"the slowest took {slowest:.3f} s",
                            timed_out=True)
