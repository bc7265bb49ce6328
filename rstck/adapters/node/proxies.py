"""Python stand-ins for JavaScript publishers, subscribers, processors and subscriptions.

The kit's probes and checks call them like any Python implementation (snake_case); each call crosses
to the driver as a `call` command on the JavaScript object (camelCase) and returns what it returned, or
raises what it threw (a JavaScriptError subclass named like the JavaScript error). A demand above
Number.MAX_SAFE_INTEGER crosses as a Number by default (docs/node.md).
"""

from __future__ import annotations

from typing import Any


class JSObject:
    """A JavaScript object the driver holds for the kit, by handle."""

    role = "object"
    __slots__ = ("_js_process", "_js_handle", "js_class", "__weakref__")

    def __init__(self, process: Any, handle: str, js_class: str = ""):
        self._js_process = process
        self._js_handle = handle
        self.js_class = js_class

    def __repr__(self) -> str:
        return f"<JavaScript {self.js_class or self.role} {self._js_handle}>"

    def _call(self, method: str, *args: Any, demand: bool = False) -> Any:
        return self._js_process.call(self._js_handle, method, args, demand=demand)


class JSPublisher(JSObject):
    role = "publisher"
    __slots__ = ()

    def subscribe(self, subscriber: Any) -> None:
        self._call("subscribe", subscriber)


class JSSubscriber(JSObject):
    role = "subscriber"
    __slots__ = ()

    def on_subscribe(self, subscription: Any) -> None:
        self._call("onSubscribe", subscription)

    def on_next(self, item: Any) -> None:
        self._call("onNext", item)

    def on_error(self, error: BaseException) -> None:
        self._call("onError", error)

    def on_complete(self) -> None:
        self._call("onComplete")


class JSProcessor(JSPublisher, JSSubscriber):
    role = "processor"
    __slots__ = ()


class JSSubscription(JSObject):
    role = "subscription"
    __slots__ = ()

    def request(self, n: Any) -> None:
        self._call("request", n, demand=True)

    def cancel(self) -> None:
        self._call("cancel")


_BY_ROLE = {cls.role: cls for cls in (JSPublisher, JSSubscriber, JSProcessor, JSSubscription)}


def proxy_class(role: str, methods: Any = ()) -> type[JSObject]:
    """The stand-in for a JavaScript object: by the role it was made or passed for, else by its methods."""
    if role in _BY_ROLE:
        return _BY_ROLE[role]
    methods = set(methods)
    if {"subscribe", "onSubscribe"} <= methods:
        return JSProcessor
    if "subscribe" in methods:
        return JSPublisher
    if "onSubscribe" in methods or "onNext" in methods:
        return JSSubscriber
    if "request" in methods or "cancel" in methods:
        return JSSubscription
    return JSObject
