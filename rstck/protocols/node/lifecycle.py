"""The life of one driver process, and the register of those not yet reaped.

A driver ends of itself when the implementation calls process.exit() or crashes, and what it left (its `exit`
event, the last line it printed) says how. The kit stops one (SIGKILL) when its check is over, when it does not
answer by a deadline, or when the runner gives its check up: `abandon`, from the runner's thread, while the
check's thread may be waiting on the process. A stopped process is reaped at once, or by the next `reap`.
"""

from __future__ import annotations

import atexit
import os
import signal
import subprocess

from rstck.protocols.node.channel import Channel
from rstck.protocols.node.driver import DRIVER, start_process
from rstck.protocols.node.errors import NodeMissing
from rstck.protocols.node.js_errors import stack_frame

STOPPED = "the Node process was stopped by the kit"


class Lifecycle:
    """One driver process, from its start to its end. Only the thread in an exchange with the driver (or any
    thread, when none is) reads or closes its channel; `abandon` is the one call for any thread."""

    def __init__(self, module: str, channel: Channel, *, node: str, env: dict[str, str]):
        try:
            self.popen = start_process([node, DRIVER, module], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                       stderr=subprocess.PIPE, pass_fds=channel.child_fds,
                                       env=dict(env, **channel.child_env))
        except OSError as exc:
            channel.close()
            raise NodeMissing(f"{node}: cannot start it ({exc.strerror or exc})") from None
        channel.connect(self.popen)
        self.channel = channel
        self.pid = self.popen.pid
        self.ended = False
        self.stopped_by_kit = False
        self.abandoned = False  # the runner gave its check up
        self.end_text = ""  # how it ended, once it has
        _LIVE[self.pid] = self
        _SPAWNED.append(self.pid)

    # -- ending of itself ---------------------------------------------------------------------------

    def ended_now(self) -> None:
        """The driver is gone (its events ended, or a command could not be written): say how, and let go."""
        if self.ended:
            return
        try:
            code = self.popen.wait(1.0)
        except subprocess.TimeoutExpired:
            code = None
        self.channel.read_what_is_left()
        self.ended = True
        self.end_text = STOPPED if self.stopped_by_kit else self._ending(code)
        self.channel.close()
        if code is not None:
            _LIVE.pop(self.pid, None)
        else:
            _DYING.append(self)

    def ended_inside(self, command: int) -> bool:
        """Whether the process, now ended, ended inside command `command` (or a command nested in it): where
        process.exit() was called; a crash without process.exit() is charged to the command under way."""
        called = self.channel.exit
        if called is None or not called.get("stack"):
            return True
        return called.get("in_op") is not None and called["in_op"] >= command

    def _ending(self, code: int | None) -> str:
        called = self.channel.exit
        if called is not None and called.get("stack"):
            where = stack_frame(called["stack"])
            return f"process.exit({called.get('code')}){' at ' + where if where else ''}"
        if code is not None and code < 0:
            try:
                how = f"killed by {signal.Signals(-code).name}"
            except ValueError:
                how = f"killed by signal {-code}"
        else:
            how = f"exit {code}"
        last = self.channel.output["stderr"].strip().splitlines()[-1:] or [""]
        return f"the Node process ended ({how}){': ' + last[0][:200] if last[0] else ''}"

    # -- stopped by the kit -------------------------------------------------------------------------

    def kill(self, *, wait: bool = True) -> None:
        """Stop the process now (SIGKILL) and close its channel; reap it now, or (`wait=False`) the next time
        `reap` looks."""
        if self.ended:
            return
        self._signal_kill()
        self.ended = self.stopped_by_kit = True
        self.end_text = self.end_text or STOPPED
        self.channel.close()
        if wait:
            _reap(self, 5.0)
        else:
            _DYING.append(self)

    def abandon(self) -> None:
        """Stop the process from any thread, while another may be waiting on it: that wait ends at once, and the
        waiting thread lets go of the process (`kill`)."""
        self.abandoned = self.stopped_by_kit = True
        self._signal_kill()
        self.channel.wake()

    def _signal_kill(self) -> None:
        try:
            self.popen.kill()
        except OSError:
            pass


# -- the register ------------------------------------------------------------------------------------

# Every driver process not yet reaped, by pid (the kit's own tests assert that none is left), those stopped
# but not yet reaped, and the pids of every driver this Python process started.
_LIVE: dict[int, Lifecycle] = {}
_DYING: list[Lifecycle] = []
_SPAWNED: list[int] = []


def _reap(life: Lifecycle, timeout_s: float | None) -> bool:
    try:
        if timeout_s is None:
            if life.popen.poll() is None:
                return False
        else:
            life.popen.wait(timeout_s)
    except subprocess.TimeoutExpired:
        return False
    _LIVE.pop(life.pid, None)
    return True


def reap(timeout_s: float = 0.0) -> None:
    """Reap the stopped processes (waiting up to `timeout_s` for each)."""
    for life in list(_DYING):
        if _reap(life, timeout_s or None):
            try:
                _DYING.remove(life)
            except ValueError:
                pass


def live_pids() -> set[int]:
    """The driver processes not yet reaped."""
    return set(_LIVE)


def spawned_pids() -> list[int]:
    """The pids of every driver process this Python process started."""
    return list(_SPAWNED)


# Registered before the pools' own (rstck/protocols/node/pool.py imports this module), so it runs after them:
# no pool starts a process once this has stopped them all.
@atexit.register
def _stop_every_process() -> None:
    for life in list(_LIVE.values()):
        life.kill(wait=False)
    reap(1.0)


def _after_fork_in_child() -> None:
    """A forked child does not own its parent's processes: it forgets them (and their descriptors)."""
    for life in list(_LIVE.values()):
        life.ended = True
        life.end_text = "the Node process belongs to the parent process"
        life.channel.close_in_forked_child()
        life.popen.returncode = 0  # not this process's child: never waited for here
    _LIVE.clear()
    _DYING.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
