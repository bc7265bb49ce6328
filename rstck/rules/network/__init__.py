"""The network profile's checks (catalog/network-protocol.toml), one module per section of the draft, for each
side the kit can test: `server/` speaks to a server under test over fresh TCP connections, `client/` runs a
client under test against a listener of the kit's. docs/network.md says how each is run."""
