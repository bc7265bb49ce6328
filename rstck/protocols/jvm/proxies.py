"""The kit's probes as Java subscribers, and Python stand-ins for Java publishers and subscriptions.

A probe reaches Java as a proxy implementing the interface family's Subscriber (`java.util.concurrent.Flow` or
`org.reactivestreams`): every Java call on it is a call of the probe's, made on the Python side of the pinned
thread that made it, so a `request` inside `onNext` stays a re-entrant call on the Java thread that delivered it.
Java compares and hashes subscribers (SubmissionPublisher refuses one subscribed twice): the proxy answers
`equals`, `hashCode` and `toString` for the probe it stands for. What a Java call throws reaches the kit as the
stand-in of the Java exception (`errors`)."""

from __future__ import annotations

from typing import Any

from rstck.protocols.jvm.errors import from_java, raised_in_call, thrown_in_java

FLOW = "java.util.concurrent.Flow$"
REACTIVE_STREAMS = "org.reactivestreams."
LONG_MAX, LONG_MIN = 2**63 - 1, -2**63


class JavaObjectStandIn:
    """A Java object of the implementation's, held through py4j."""

    __slots__ = ("java_object", "java_class", "_bridge", "__weakref__")

    def __init__(self, bridge: Any, java_object: Any):
        self._bridge = bridge
        self.java_object = java_object
        self.java_class = java_object.getClass().getName()

    def stands_for_class(self) -> tuple[str, str]:
        """How a trace names the Java object this stands for (rstck/core/labels.py)."""
        return self.java_class.rpartition(".")[2].rpartition("$")[2] or self.java_class, f"Java class {self.java_class}"

    def __repr__(self) -> str:
        return f"<Java {self.java_class}>"

    def _call(self, method: str, *args: Any) -> Any:
        try:
            return getattr(self.java_object, method)(*args)
        except Exception as exc:  # noqa: BLE001 - the implementation's throwable, as its stand-in
            raise raised_in_call(self._bridge, exc) from None


class JavaSubscription(JavaObjectStandIn):
    __slots__ = ()

    def request(self, n: int) -> None:
        # Java's request takes a long: a demand beyond one is the largest long of its sign (3.17: unbounded).
        self._call("request", max(min(n, LONG_MAX), LONG_MIN))

    def cancel(self) -> None:
        self._call("cancel")


class JavaPublisher(JavaObjectStandIn):
    """A Java publisher: `subscribe` hands Java a proxy of the kit's subscriber (one per subscriber, so the same
    subscriber stays equal to itself in Java), or Java's null."""

    __slots__ = ("_family", "_proxies")

    def __init__(self, bridge: Any, java_object: Any, family: str):
        super().__init__(bridge, java_object)
        self._family = family
        self._proxies: dict[int, SubscriberProxy] = {}

    def subscribe(self, subscriber: Any) -> None:
        if subscriber is None:
            self._call("subscribe", None)
            return
        proxy = self._proxies.get(id(subscriber))
        if proxy is None or proxy.subscriber is not subscriber:
            proxy = self._proxies[id(subscriber)] = subscriber_proxy(self._bridge, subscriber, self._family)
        self._call("subscribe", proxy)


class SubscriberProxy:
    """A kit subscriber as Java sees it (made by `subscriber_proxy`, which sets the Java interface)."""

    def __init__(self, bridge: Any, subscriber: Any):
        self._bridge = bridge
        self.subscriber = subscriber

    def _forward(self, call: Any, *args: Any) -> None:
        try:
            call(*args)
        except Exception as exc:  # noqa: BLE001 - the kit's object raised on purpose: a real Java exception
            raise thrown_in_java(self._bridge, exc) from None

    def onSubscribe(self, subscription: Any) -> None:  # noqa: N802 - Java's names
        stand_in = None if subscription is None else JavaSubscription(self._bridge, subscription)
        self._forward(self.subscriber.on_subscribe, stand_in)

    def onNext(self, item: Any) -> None:  # noqa: N802
        self._forward(self.subscriber.on_next, item)

    def onError(self, throwable: Any) -> None:  # noqa: N802
        error = None if throwable is None else from_java(self._bridge, throwable)
        self._forward(self.subscriber.on_error, error)

    def onComplete(self) -> None:  # noqa: N802
        self._forward(self.subscriber.on_complete)

    def equals(self, other: Any) -> bool:
        # A proxy of the kit's comes back to Python as itself; any other Java object is another subscriber.
        return isinstance(other, SubscriberProxy) and other.subscriber is self.subscriber

    def hashCode(self) -> int:  # noqa: N802
        return hash(id(self.subscriber)) & 0x7FFFFFFF

    def toString(self) -> str:  # noqa: N802
        return f"rstck {type(self.subscriber).__name__}@{id(self.subscriber):x}"


_PROXY_CLASSES: dict[str, type[SubscriberProxy]] = {}


def subscriber_proxy(bridge: Any, subscriber: Any, family: str) -> SubscriberProxy:
    """A Java proxy of `subscriber`, implementing `family`'s Subscriber interface."""
    cls = _PROXY_CLASSES.get(family)
    if cls is None:
        java = type("Java", (), {"implements": [family + "Subscriber"]})
        cls = _PROXY_CLASSES[family] = type("JavaSubscriberProxy", (SubscriberProxy,), {"Java": java})
    return cls(bridge, subscriber)
