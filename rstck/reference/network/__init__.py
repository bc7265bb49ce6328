"""The reference server and client of the network protocol (docs/wire-format.md), over TCP with asyncio."""

RESERVED_PREFIX = "rstck/"  # names every server under test serves (docs/wire-format.md); not a user's to take


def close_sending_side(writer) -> None:
    """After goodbye: half-close (EOF) so the peer reads to the end of what was sent; a reset or a closed
    transport is already the end (asyncio.StreamWriter)."""
    if writer.can_write_eof() and not writer.is_closing():
        try:
            writer.write_eof()
        except OSError:
            pass
