"""The network profile's checks (catalogue.toml), one module per section of the draft, for each
side the kit can test: `server/` speaks to a server under test over fresh TCP connections, `client/` runs a
client under test against a listener of the kit's. docs/network.md says how each is run."""

from rstck.core.plugins import Profile

SECTIONS = ("transport", "framing", "negotiation", "core", "packed", "split", "closing")

PROFILE = Profile(
    name="network-protocol",
    title="Reactive Streams network protocol (draft)",
    package=__name__,
    checks=tuple(f"{side}.{section}" for side in ("server", "client") for section in SECTIONS),
    subjects=("server", "client"),
    marker="network",
    markers={"network": "checks of the network protocol's items (net.*)",
             "server": "network checks of a server, over TCP",
             "client": "network checks of a client, run as a command against the kit's listener"},
    section_needs={"server": frozenset({"server"}), "client": frozenset({"client"})},
    # A server check is called with connections to the server; a client check with runs of the client command.
    contexts={"server": "wire", "client": "client"},
    reproduced_in=("python", "javascript", "network"),
)
