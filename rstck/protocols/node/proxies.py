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

    def stands_for_class(self) -> tuple[str, str]:
        """What a trace calls the object this stands in for (rstck/core/labels.py): it is the implementation's,
        named by its JavaScript class."""
        name = self.js_class or "Object"
        return name, "a plain JavaScript object" if name == "Object" else f"JavaScript class {name}"

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
# Which roles an object's methods show it can play. One object may play several at once: a processor that
# hands itself to its subscriber as the subscription is a publisher, a subscriber and a subscription, and its
# one stand-in must offer the methods of all of them.
_ROLE_OF_METHODS = (("publisher", {"subscribe"}), ("subscriber", {"onSubscribe"}), ("subscriber", {"onNext"}),
                    ("subscription", {"request"}), ("subscription", {"cancel"}))
_ORDER = ("processor", "publisher", "subscriber", "subscription")
_COMBINED: dict[frozenset[str], type[JSObject]] = {}


def _roles(role: str, methods: Any) -> frozenset[str]:
    methods = set(methods)
    roles = {"publisher", "subscriber"} if role == "processor" else ({role} if role in _BY_ROLE else set())
    roles |= {named for named, needed in _ROLE_OF_METHODS if needed <= methods}
    return frozenset(roles)


def _class_of(roles: frozenset[str]) -> type[JSObject]:
    """The stand-in class for a set of the basic roles (publisher, subscriber, subscription)."""
    names = set(roles)
    if {"publisher", "subscriber"} <= names:
        names = (names - {"publisher", "subscriber"}) | {"processor"}
    if not names:
        return JSObject
    if len(names) == 1:
        return _BY_ROLE[names.pop()]
    key = frozenset(names)
    known = _COMBINED.get(key)
    if known is None:
        ordered = [r for r in _ORDER if r in names]
        known = _COMBINED[key] = type("JS" + "".join(r.capitalize() for r in ordered),
                                      tuple(_BY_ROLE[r] for r in ordered),
                                      {"__slots__": (), "role": "+".join(ordered), "__module__": __name__})
    return known


def _held(proxy: JSObject) -> frozenset[str]:
    return frozenset(r for r in ("publisher", "subscriber", "subscription") if isinstance(proxy, _BY_ROLE[r]))


def proxy_class(role: str, methods: Any = ()) -> type[JSObject]:
    """The stand-in for a JavaScript object: for the role it was made or passed for, and every other role its
    methods show it plays."""
    return _class_of(_roles(role, methods))


def fitted(proxy: JSObject, role: str, methods: Any = ()) -> JSObject:
    """`proxy`, able to play `role` too: an object first met as a processor, then handed over as a
    subscription, keeps its one stand-in (and handle), which gains the subscription's methods. Every
    stand-in class has the same (empty) slots, so the class can change in place."""
    wanted = _roles(role, methods)
    if wanted <= _held(proxy):
        return proxy
    proxy.__class__ = _class_of(wanted | _held(proxy))
    return proxy
