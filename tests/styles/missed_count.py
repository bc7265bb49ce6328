"""The missed count the styles serialise with: whoever raises it from zero gets the right (to drain, to process,
to call the upstream); the others only add to it; the holder gives back what it has seen and looks again until
nothing came meanwhile. One mechanism for every style that guards with a count."""

from __future__ import annotations

import threading


class MissedCount:
    """`lock` guards the count (a style may share it with its own bookkeeping); `held` starts the count already
    raised: the right is the constructor's until `let_go` or the first `looked_again`."""

    def __init__(self, lock=None, *, held: bool = False):
        self.lock = lock if lock is not None else threading.Lock()
        self.count = self.held = int(held)

    def enter(self) -> bool:
        """Count one more thing to look at; whether the caller took the right (it raised the count from zero)."""
        with self.lock:
            self.count += 1
            if self.count > 1:
                return False
            self.held = 1
            return True

    def let_go(self) -> None:
        """Give up a right held from construction without looking (the 1.3 defect's)."""
        self.count = self.held = 0

    def looked_again(self) -> bool:
        """The holder has looked at what it had seen: give that back; whether the right is let go of (nothing came
        meanwhile), else the holder looks again."""
        with self.lock:
            self.count -= self.held
            self.held = self.count
            return self.count == 0
