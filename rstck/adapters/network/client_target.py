"""A client of the network protocol under test: `rstck check --client "CMD"`.

Each case of a client check runs the command once against a listener of the kit's (docs/network.md, "Testing
a client"): the kit listens on 127.0.0.1, on a fresh port, and runs `CMD URL PUBLISHER`; the client connects,
subscribes to PUBLISHER, prints each element it receives as a line of lowercase hex, and exits 0 on onComplete,
3 on onError or when the connection ended its stream first. The kit serves the one connection as a server
(`ServingPeer`), and judges the client by the frames it sends, what it prints and its exit status.

A case is bounded by the check's deadline from the start of the command to its exit. The command runs in a
session of its own, so that the kit can kill it with everything it started: at the deadline, and in any case
when the check ends (the session closes every case, whatever the check raised).
"""

from __future__ import annotations

import os
import shlex
import sys
from typing import Any

from rstck.core.target import Target
from rstck.core.verdict import BadInput
from rstck.adapters.network import CLIENT_PREFIX
from rstck.protocols.network.client_case import ClientCase
from rstck.protocols.network.recording import operation

class NetworkClientTarget(Target):
    """A client program of the network protocol, run once per case (docs/network.md, "Testing a client")."""

    capabilities = frozenset({"client"})

    def __init__(self, command: str):
        super().__init__()
        try:
            self.argv = shlex.split(command)
        except ValueError as exc:
            raise BadInput(f"--client {command!r}: {exc}") from None
        if not self.argv:
            raise BadInput("--client: the command is empty")
        self.command = command
        self.name = f"client: {command}"
        self.loaded_as = CLIENT_PREFIX + command  # the target spec: reports say how to run it again

    def environment(self) -> dict[str, str]:
        """The command's environment: the kit's, with the kit's virtual environment first on PATH (as if it were
        activated), so that `python` in the command is the Python that runs rstck."""
        env = dict(os.environ)
        if sys.prefix != sys.base_prefix:
            bin_dir = os.path.dirname(sys.executable)
            env["PATH"] = os.pathsep.join([bin_dir, *(p for p in env.get("PATH", "").split(os.pathsep) if p)])
        return env

    def context(self, kind: str, session: Any, rule: str) -> Any:
        return ClientRuns(self, session) if kind == "client" else super().context(kind, session, rule)


class ClientRuns:
    """What a check of a client is called with: runs of the client command, each against a fresh listener."""

    def __init__(self, target: NetworkClientTarget, session: Any):
        self.target = target
        self.session = session

    def run(self, publisher: str, *, hello: bool = True) -> ClientCase:
        """Run the command against a fresh listener and accept its connection (the kit's serverHello sent at once
        unless not `hello`); the case, closed when the check ends."""
        case = ClientCase(self.session, self.target.command, self.target.argv, self.target.environment(), publisher)
        self.session.lifecycle.close_at_end(case.close, "the client run")
        with operation(self.session, None):  # the run's operation, which a script makes as one
            case.start()
            case.accept(hello=hello)
        case.peer.record("run", publisher=publisher, hello=hello)
        return case

