"""The kit's own threads, marked as such: settling never waits for them, and the calls they make are the kit's."""

from __future__ import annotations

import threading
from typing import Callable

_KIT = "_rstck_kit"


def mark_kit_thread(thread: threading.Thread | None = None) -> None:
    """Mark a thread as the kit's own: settling never waits for it, and its calls are the kit's."""
    setattr(thread or threading.current_thread(), _KIT, True)


def is_kit_thread(thread: threading.Thread) -> bool:
    return thread is threading.main_thread() or getattr(thread, _KIT, False)


def start_kit_thread(call: Callable[[], None], name: str) -> threading.Thread:
    """Run `call` on a new daemon thread of the kit's (not joined: the caller decides whether to wait for it)."""
    thread = threading.Thread(target=call, name=name, daemon=True)
    mark_kit_thread(thread)
    thread.start()
    return thread
