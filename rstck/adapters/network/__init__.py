"""The network adapter: a server or a client of the network protocol under test (docs/network.md).

`rstck check tcp://HOST:PORT` tests the server listening there (`server_target`); `rstck check --client "CMD"`
tests a client program, which the kit runs once per case against a listener of its own (`client_target`).
Both speak through `peer.WirePeer`, which logs every frame into the check's trace and checks it on arrival.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rstck.core.plugins import Adapter, TargetOption

if TYPE_CHECKING:  # importing this package stays light: it is the plug-in's description
    from rstck.core.target import Target

CLIENT_PREFIX = "client-cmd:"  # how `--client CMD` names its target to a worker process


def _rerun(spec: str) -> list[str]:
    return ["--client", spec[len(CLIENT_PREFIX):]] if spec.startswith(CLIENT_PREFIX) else [spec]


ADAPTER = Adapter(
    name="network",
    schemes=("tcp://", CLIENT_PREFIX),
    loader="rstck.adapters.network:network_target",
    describes="tcp://HOST:PORT for a server of the network protocol",
    options=(TargetOption("--client", "CMD", "test a client of the network protocol: the kit listens and runs "
                          "`CMD URL PUBLISHER` per case (docs/network.md)", prefix=CLIENT_PREFIX),),
    rerun=_rerun,
    reproducers={"tcp://": "network", CLIENT_PREFIX: "network"},
)


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
