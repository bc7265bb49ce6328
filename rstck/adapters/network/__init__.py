"""The network adapter: a server or a client of the network protocol under test (docs/network.md).

`rstck check tcp://HOST:PORT` tests the server listening there (`server_target`); `rstck check --client "CMD"`
tests a client program, which the kit runs once per case against a listener of its own (`client_target`).
Both speak through `peer.WirePeer`, which logs every frame into the check's trace and checks it on arrival.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # importing this package stays light: reports read CLIENT_PREFIX
    from rstck.core.target import Target

CLIENT_PREFIX = "client-cmd:"  # how `--client CMD` names its target to a worker process


def network_target(spec: str) -> Target | None:
    """The network target `spec` names (tcp://HOST:PORT, or client-cmd:CMD), or None if it names none."""
    if spec.startswith("tcp://"):
        from rstck.adapters.network.server_target import NetworkServerTarget

        target = NetworkServerTarget(spec)
        target.reachable()
        return target
    if spec.startswith(CLIENT_PREFIX):
        from rstck.adapters.network.client_target import NetworkClientTarget

        return NetworkClientTarget(spec[len(CLIENT_PREFIX):])
    return None
