"""The Reactive Streams network protocol as rstck speaks it (docs/wire-format.md): the frames and their codec
(`wire`), the reserved publisher names every server serves (`reserved`), the kit's ends of a connection spoken
frame by frame (`peer`, `serving_peer`), and a connection whose remote publishers are ordinary Publishers
(`connection`, offered to users as `rstck.connect`). Checks, adapters and the reference server and client all
speak it from here."""

RESERVED_PREFIX = "rstck/"  # names every server under test serves (docs/wire-format.md); not a user's to take


def close_sending_side(writer) -> None:
    """After goodbye: half-close (EOF) so the peer reads to the end of what was sent; a reset or a closed
    transport is already the end (asyncio.StreamWriter)."""
    if writer.can_write_eof() and not writer.is_closing():
        try:
            writer.write_eof()
        except OSError:
            pass
