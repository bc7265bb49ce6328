"""One driver process with the implementation's module loaded: what a check's settler and the proxies talk to.

It composes the channel to the driver (rstck/protocols/node/channel.py), the process's lifecycle
(lifecycle.py), the exchange of commands with it (exchange.py) and the codec of the values that cross
(values.py).
"""

from __future__ import annotations

from typing import Any, Callable

from rstck.protocols.node.channel import Channel
from rstck.protocols.node.errors import Abandoned, NoReply, ProcessEnded
from rstck.protocols.node.exchange import Exchange, Handler
from rstck.protocols.node.lifecycle import Lifecycle
from rstck.protocols.node.values import ValueCodec


class NodeProcess:
    """One `node driver.js MODULE` process and the protocol spoken with it. Thread-safe: one exchange at a
    time, re-entered by the thread that answers an ask (its nested commands)."""

    def __init__(self, module: str, *, node: str, env: dict[str, str]):
        self.module = module
        self.channel = Channel()
        self.life = Lifecycle(module, self.channel, node=node, env=env)
        self.values = ValueCodec(self)
        self.exchange = Exchange(self.channel, self.life, self.values)
        self.served = 0  # checks this process has served (isolation "reuse")

    def __repr__(self) -> str:
        return f"<NodeProcess pid {self.pid}{' ended' if self.ended else ''}>"

    @property
    def pid(self) -> int:
        return self.life.pid

    @property
    def ended(self) -> bool:
        return self.life.ended

    @property
    def end_text(self) -> str:
        return self.life.end_text

    @property
    def handler(self) -> Handler | None:
        """What answers asks and takes events: the check's settler."""
        return self.exchange.handler

    @handler.setter
    def handler(self, handler: Handler | None) -> None:
        self.exchange.handler = handler

    @property
    def early(self) -> list[dict[str, Any]]:
        """The events that came before a handler was bound (what the module printed as it loaded)."""
        return self.exchange.early

    @property
    def demand_as(self) -> str:
        return self.values.demand_as

    @demand_as.setter
    def demand_as(self, kind: str) -> None:
        self.values.demand_as = kind

    def wait_ready(self, timeout_s: float) -> dict[str, Any]:
        return self.exchange.handshake(timeout_s)

    def command(self, fields: dict[str, Any], *, deadline: float | None,
                numbered: Callable[[int], None] | None = None) -> dict[str, Any]:
        return self.exchange.command(fields, deadline=deadline, numbered=numbered)

    def call(self, handle: str, method: str, args: tuple, *, demand: bool = False) -> Any:
        """Call `method` on the JavaScript object `handle` (what a proxy does): what it returned, decoded, or
        what it threw, raised."""
        handler = self.handler
        if handler is not None:
            if demand:
                handler.demand_sent(args)
            if method == "cancel":
                handler.cancel_sent()
        try:
            reply = self.command({"op": "call", "target": handle, "method": method,
                                  "args": [self.values.encode(a, demand=demand) for a in args]},
                                 deadline=handler.deadline() if handler is not None else None)
        except NoReply:
            self.kill(wait=False)  # it runs code that never returns: no later call could be answered either
            raise
        if reply.get("ok"):
            return self.values.decode(reply.get("ret"))
        raise self.values.thrown(reply.get("thrown"))

    def reset(self, deadline: float) -> bool:
        """Make the process fit to serve another check (isolation "reuse"): the driver drops what the kit
        held and evaluates the module afresh; False if it could not (then the process is stopped)."""
        self.handler = None
        self.early.clear()  # what the module prints as it is evaluated afresh is the next check's to see
        try:
            reply = self.command({"op": "reset"}, deadline=deadline)
        except (NoReply, ProcessEnded, Abandoned):
            self.kill(wait=False)
            return False
        if not (reply.get("ok") and reply.get("reloaded")):
            self.kill(wait=False)
            return False
        self.values.forget()
        self.channel.forget_what_was_read()
        self.served += 1
        return True

    def kill(self, *, wait: bool = True) -> None:
        """Stop the process now (SIGKILL); reap it now, or (`wait=False`) the next time the pool looks."""
        self.life.kill(wait=wait)

    def abandon(self) -> None:
        """The check this process serves was given up (from the runner's thread): stop the process at once. A
        wait on it under way ends with Abandoned; when none is, the process is let go of here."""
        self.life.abandon()
        if self.exchange.lock.acquire(blocking=False):
            try:
                self.life.kill(wait=False)
            finally:
                self.exchange.lock.release()

    # The values that cross (rstck/protocols/node/values.py), as the adapter and the proxies use them.

    def encode(self, value: Any) -> Any:
        return self.values.encode(value)

    def decode(self, value: Any, *, role: str = "") -> Any:
        return self.values.decode(value, role=role)

    def thrown(self, spec: Any) -> BaseException:
        return self.values.thrown(spec)

    def proxy(self, spec: dict[str, Any], role: str = "") -> Any:
        return self.values.proxy(spec, role)

    def kit_object(self, kit: str) -> Any:
        return self.values.kit_object(kit)

    def released(self, kits: list[str]) -> None:
        self.values.released(kits)
