"""The reference server and client of the network protocol (docs/wire-format.md), over TCP with asyncio."""
