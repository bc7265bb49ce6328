"""The kit's probes as Java subscribers, and Python stand-ins for Java publishers and subscriptions.

A probe reaches Java as a proxy implementing the interface family's Subscriber (`java.util.concurrent.Flow` or
`org.reactivestreams`): every Java call on it is a call of the probe's, made on the Python side of the pinned
thread that made it, so a `request` inside `onNext` stays a re-entrant call on the Java thread that delivered it.
Java compares and hashes subscribers (SubmissionPublisher refuses one subscribed twice): the proxy answers
`equals`, `hashCode` and `toString` for the probe it stands for. What a Java call throws reaches the kit as the
stand-in of the Java exception (`errors`).

The other way round, for the subscriber and processor roles: a Java subscriber or processor is a Python stand-in
the kit's source signals (`JavaSubscriber`, `JavaProcessor`), and the kit's subscription reaches Java as a proxy
implementing the family's Subscription (`SubscriptionProxy`); the elements the kit sends are made by the class's
`createElement(int)` where it has one (`JavaElements`), and are told apart again when they come back.

3.13: a Java publisher's reference to a kit subscriber is a reference to the subscriber's py4j proxy, which py4j's
pool keeps alive on the Python side until Java finalizes it (deprecated, and late). So the kit's proxy holds its
subscriber weakly, `JavaReferences` holds it strongly, and the bridge watches the very Java proxy a publisher was
handed through a Java WeakReference: once Java collected it (`RstckJvmBridge.released`), the kit lets go of the
subscriber, and nothing of the kit's or py4j's keeps it reachable any more."""

from __future__ import annotations

import collections
import itertools
import os
import threading
import weakref
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


class HeldByJava:
    """A kit subscriber a Java publisher was handed and may still call: kept until the JVM has collected the proxy
    it was handed as (3.13 names this class as what still holds a subscriber Java did not let go of)."""

    __slots__ = ("subscriber",)

    def __init__(self, subscriber: Any):
        self.subscriber = subscriber


class JavaReferences(dict):
    """What a JVM may still call of the kit's subscribers, by the key the bridge watches their Java proxy under
    (`HeldByJava`; one registry per JVM). Each entry is made as its subscriber is subscribed, inside the check, so
    a collection during the check sees it (the runner freezes what came before).

    The JVM is asked (`release_collected`, at a settle) once the kit let go of a cancelled Java subscription
    (3.13's check: the subscriber should be collectable then), and after every COLLECT_EVERY subscriptions, so that
    neither side keeps for long what the other dropped."""

    COLLECT_EVERY = 1000

    def __init__(self) -> None:
        super().__init__()
        self._keys = itertools.count(1)
        self._lock = threading.Lock()
        self._since_collected = 0
        self._let_go: collections.deque[str] = collections.deque()  # py4j ids of cancelled subscriptions let go of
        self._collects: bool | None = None

    def hold(self, subscriber: Any) -> int:
        with self._lock:
            key = next(self._keys)
            self[key] = HeldByJava(subscriber)
            self._since_collected += 1
            return key

    def subscription_let_go(self, object_id: str) -> None:
        self._let_go.append(object_id)  # called by a finalizer: no lock, no call into Java

    def forget(self, key: int) -> None:
        """Java finalized the subscriber's proxy and py4j let go of it: so does the kit."""
        with self._lock:
            self.pop(key, None)

    def collection_due(self) -> bool:
        return bool(self._let_go) or self._since_collected >= self.COLLECT_EVERY

    def collects_on_request(self, bridge: Any) -> bool:
        """Whether the JVM collects garbage when asked (not with -XX:+DisableExplicitGC): found out once."""
        if self._collects is None:
            self._collects = self.release_collected(bridge)
        return self._collects

    def release_collected(self, bridge: Any) -> bool:
        """Ask the JVM to collect garbage, and let go of the subscribers whose proxies it collected; False when it
        did not collect (System.gc() disabled).

        Java is first told of the Java objects the kit dropped: py4j tells it from a worker thread that polls once a
        second, and until then Java keeps them (a cancelled subscription the kit let go of, and through it the
        subscriber). A cancelled subscription is released here, on this thread, so that no send of the worker's
        can still be on its way; the rest of the worker's queue is sent here too."""
        client = bridge._gateway_client
        while True:
            try:
                object_id = self._let_go.popleft()
            except IndexError:
                break
            _release_in_java(client, object_id)
        pending = getattr(client, "finalizer_deque", None)  # py4j's ClientServer: (client, object id) tasks
        while pending:
            try:
                task = pending.pop()
            except IndexError:
                break
            if not isinstance(task, tuple):  # the worker's shutdown mark: left for it
                pending.append(task)
                break
            _release_in_java(*task)
        keys = bridge.released()
        if keys is None:
            return False
        with self._lock:
            self._since_collected = 0
            for key in keys.split():
                self.pop(int(key), None)
        return True


def _release_in_java(client: Any, object_id: str) -> None:
    # py4j's JavaClient sends at once with enqueue=False; a plain GatewayClient takes no such argument.
    try:
        client.garbage_collect_object(object_id, False)
    except TypeError:
        client.garbage_collect_object(object_id)


class JavaSubscription(JavaObjectStandIn):
    __slots__ = ("_references", "_cancelled")

    def __init__(self, bridge: Any, java_object: Any, references: JavaReferences | None = None):
        super().__init__(bridge, java_object)
        self._references = references
        self._cancelled = False

    def request(self, n: int) -> None:
        # Java's request takes a long: a demand beyond one is the largest long of its sign (3.17: unbounded).
        self._call("request", max(min(n, LONG_MAX), LONG_MIN))

    def cancel(self) -> None:
        try:
            self._call("cancel")
        finally:
            if self._references is not None and not self._cancelled:
                # Once the kit drops this handle (3.13's check lets go of a cancelled subscription), the next
                # settle releases it in Java and asks the JVM which subscribers it still references.
                weakref.finalize(self, self._references.subscription_let_go, self.java_object._get_object_id())
            self._cancelled = True


class JavaPublisher(JavaObjectStandIn):
    """A Java publisher: `subscribe` hands Java a new proxy of the kit's subscriber through the bridge, which
    watches it (3.13: `JavaReferences`), or Java's null. The proxies of one subscriber are equal in Java."""

    __slots__ = ("_family", "_elements", "_references")

    def __init__(self, bridge: Any, java_object: Any, family: str, elements: JavaElements | None = None,
                 references: JavaReferences | None = None):
        super().__init__(bridge, java_object)
        self._family = family
        self._elements = elements
        self._references = references

    def subscribe(self, subscriber: Any) -> None:
        if subscriber is None or self._references is None:
            self._call("subscribe", None if subscriber is None else subscriber_proxy(
                self._bridge, subscriber, self._family, self._elements))
            return
        key = self._references.hold(subscriber)
        proxy = subscriber_proxy(self._bridge, subscriber, self._family, self._elements, self._references)
        # The proxy lives in py4j's pool as long as Java has not finalized it; when it goes, so does the key.
        weakref.finalize(proxy, self._references.forget, key)
        try:
            self._bridge.subscribe(self.java_object, proxy, key, self._family)
        except Exception as exc:  # noqa: BLE001 - the implementation's throwable, as its stand-in
            raise raised_in_call(self._bridge, exc) from None


class JavaElements:
    """The elements the kit sends a Java subscriber or processor: `createElement(int)`'s, where the class has it
    (the JVM TCK's name), else the kit's integers as Java Integers. What comes back out of Java (a processor's
    downstream, a white-box observer) is read back as the kit's integer it was made from, so that a check
    compares what it sent with what came out. An element py4j does not copy into Python (neither a string, a
    boxed number nor a boolean) comes back as the Java object."""

    def __init__(self, instance: Any = None):
        self._instance = instance  # None: the class has no createElement(int)
        self._made: dict[Any, int] = {}

    def to_java(self, item: Any) -> Any:
        if self._instance is None or not isinstance(item, int) or isinstance(item, bool):
            return item
        made = self._instance.createElement(item)
        try:
            self._made.setdefault(made, item)
        except TypeError:  # a Java object: not hashable in Python, left as it is
            pass
        return made

    def from_java(self, item: Any) -> Any:
        try:
            return self._made.get(item, item)
        except TypeError:
            return item


class SubscriptionProxy:
    """A subscription of the kit's as Java sees it (made by `subscription_proxy`, which sets the Java interface):
    Java's request(long) and cancel() are the kit's calls, made on the thread Java made them on (a request inside
    onNext stays on the thread that delivered onNext: the pinned-thread ClientServer)."""

    def __init__(self, bridge: Any, subscription: Any):
        self._bridge = bridge
        self.subscription = subscription

    def request(self, n: int) -> None:
        try:
            self.subscription.request(n)
        except Exception as exc:  # noqa: BLE001 - the kit's subscription raised on purpose: a Java exception
            raise thrown_in_java(self._bridge, exc) from None

    def cancel(self) -> None:
        try:
            self.subscription.cancel()
        except Exception as exc:  # noqa: BLE001
            raise thrown_in_java(self._bridge, exc) from None

    def equals(self, other: Any) -> bool:
        return isinstance(other, SubscriptionProxy) and other.subscription is self.subscription

    def hashCode(self) -> int:  # noqa: N802 - Java's names
        return hash(id(self.subscription)) & 0x7FFFFFFF

    def toString(self) -> str:  # noqa: N802
        return f"rstck {self.subscription!r}"


class _SubscriberSide:
    """The signals the kit's source sends a Java subscriber (or a processor's subscriber side): each is the Java
    call, with the kit's subscription as a Java proxy (one per subscription: Java sees the same object each time)
    and the kit's elements made by `createElement`."""

    __slots__ = ()

    def on_subscribe(self, subscription: Any) -> None:
        proxies = self._subscriptions
        proxy = None
        if subscription is not None:
            proxy = proxies.get(id(subscription))
            if proxy is None or proxy.subscription is not subscription:
                proxy = proxies[id(subscription)] = subscription_proxy(self._bridge, subscription, self._family)
        self._call("onSubscribe", proxy)

    def on_next(self, item: Any) -> None:
        self._call("onNext", None if item is None else self._elements.to_java(item))

    def on_error(self, error: BaseException | None) -> None:
        self._call("onError", None if error is None else _as_throwable(self._bridge, error))

    def on_complete(self) -> None:
        self._call("onComplete")


def _as_throwable(bridge: Any, error: BaseException) -> Any:
    """The Java throwable for an error the kit signals: the Java one it stands for, else a RuntimeException."""
    return getattr(error, "java_object", None) or bridge.throwable("java.lang.RuntimeException",
                                                                   f"{type(error).__name__}: {error}")


class JavaSubscriber(_SubscriberSide, JavaObjectStandIn):
    """A Java subscriber under test, signalled by the kit's source."""

    __slots__ = ("_family", "_elements", "_subscriptions")

    def __init__(self, bridge: Any, java_object: Any, family: str, elements: JavaElements):
        super().__init__(bridge, java_object)
        self._family = family
        self._elements = elements
        self._subscriptions: dict[int, SubscriptionProxy] = {}


class JavaProcessor(_SubscriberSide, JavaPublisher):
    """A Java processor under test: a Java publisher downstream, a Java subscriber upstream."""

    __slots__ = ("_subscriptions",)

    def __init__(self, bridge: Any, java_object: Any, family: str, elements: JavaElements,
                 references: JavaReferences | None = None):
        super().__init__(bridge, java_object, family, elements, references)
        self._subscriptions: dict[int, SubscriptionProxy] = {}


class ObserverProxy:
    """The white-box observer as Java sees it: a Subscriber of the family the subscriber under test tells what it
    has processed, by the signal's own method (onSubscribe once it processed on_subscribe, onNext(item), ...), so a
    class written for rstck needs no TCK on its classpath (docs/jvm.md)."""

    def __init__(self, bridge: Any, observer: Any, elements: JavaElements):
        self._bridge = bridge
        self.observer = observer
        self._elements = elements

    def onSubscribe(self, subscription: Any) -> None:  # noqa: N802 - Java's names
        self.observer.on_subscribe_processed()

    def onNext(self, item: Any) -> None:  # noqa: N802
        self.observer.on_next_processed(self._elements.from_java(item))

    def onError(self, throwable: Any) -> None:  # noqa: N802
        self.observer.on_error_processed(None if throwable is None else from_java(self._bridge, throwable))

    def onComplete(self) -> None:  # noqa: N802
        self.observer.on_complete_processed()

    def equals(self, other: Any) -> bool:
        return isinstance(other, ObserverProxy) and other.observer is self.observer

    def hashCode(self) -> int:  # noqa: N802
        return hash(id(self.observer)) & 0x7FFFFFFF

    def toString(self) -> str:  # noqa: N802
        return f"rstck {self.observer.name}"


class SubscriberProxy:
    """A kit subscriber as Java sees it (made by `subscriber_proxy`, which sets the Java interface). With
    `references`, the subscriber is held there and only weakly here (3.13: `JavaReferences`)."""

    def __init__(self, bridge: Any, subscriber: Any, elements: JavaElements | None = None,
                 references: JavaReferences | None = None):
        self._bridge = bridge
        self._elements = elements
        self._references = references
        try:
            self._subscriber = weakref.ref(subscriber) if references is not None else (lambda: subscriber)
        except TypeError:  # not weakly referable: held here too
            self._subscriber = lambda: subscriber

    @property
    def subscriber(self) -> Any:
        return self._subscriber()

    def _forward(self, call: Any, *args: Any) -> None:
        try:
            call(*args)
        except Exception as exc:  # noqa: BLE001 - the kit's object raised on purpose: a real Java exception
            raise thrown_in_java(self._bridge, exc) from None

    def onSubscribe(self, subscription: Any) -> None:  # noqa: N802 - Java's names
        stand_in = None if subscription is None else JavaSubscription(self._bridge, subscription, self._references)
        self._forward(self.subscriber.on_subscribe, stand_in)

    def onNext(self, item: Any) -> None:  # noqa: N802
        self._forward(self.subscriber.on_next, item if self._elements is None else self._elements.from_java(item))

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


_PROXY_CLASSES: dict[tuple[type, str, str], type] = {}


def _java_proxy_class(base: type, family: str, interface: str) -> type:
    """`base` made into a Java proxy class implementing `family`'s `interface` (one class per pair)."""
    cls = _PROXY_CLASSES.get((base, family, interface))
    if cls is None:
        java = type("Java", (), {"implements": [family + interface]})
        cls = _PROXY_CLASSES[base, family, interface] = type(f"Java{base.__name__}", (base,), {"Java": java})
    return cls


def subscriber_proxy(bridge: Any, subscriber: Any, family: str, elements: JavaElements | None = None,
                     references: JavaReferences | None = None) -> SubscriberProxy:
    """A Java proxy of `subscriber`, implementing `family`'s Subscriber interface."""
    return _java_proxy_class(SubscriberProxy, family, "Subscriber")(bridge, subscriber, elements, references)


def subscription_proxy(bridge: Any, subscription: Any, family: str) -> SubscriptionProxy:
    """A Java proxy of the kit's `subscription`, implementing `family`'s Subscription interface."""
    return _java_proxy_class(SubscriptionProxy, family, "Subscription")(bridge, subscription)


def observer_proxy(bridge: Any, observer: Any, family: str, elements: JavaElements) -> ObserverProxy:
    """A Java proxy of the kit's white-box `observer`, implementing `family`'s Subscriber interface."""
    return _java_proxy_class(ObserverProxy, family, "Subscriber")(bridge, observer, elements)


# The JVM TCK's white-box probe: a class of the TCK's, so the kit's stand-in for it is a Java subclass compiled
# against the user's classpath (which has the TCK wherever a class takes that probe).
TCK_WHITEBOX_PROBE = "org.reactivestreams.tck.SubscriberWhiteboxVerification$WhiteboxSubscriberProbe"
_TCK_PROBE_SOURCE = os.path.join(os.path.dirname(__file__), "RstckTckWhiteboxProbe.java")
_TCK_PROBE_CLASS = "RstckTckWhiteboxProbe"


def tck_whitebox_probe(jvm: Any, observer: Any, elements: JavaElements) -> Any:
    """A WhiteboxSubscriberProbe of the JVM TCK's that tells the kit's white-box `observer` what the subscriber
    registers (RstckTckWhiteboxProbe.java): its registerOnSubscribe(puppet) is the observer's onSubscribe."""
    directory = compiled_tck_probe(jvm.classpath)
    return jvm.bridge.newHelper(directory, _TCK_PROBE_CLASS, observer_proxy(jvm.bridge, observer, FLOW, elements))


def compiled_tck_probe(classpath: list[str]) -> str:
    """The directory holding RstckTckWhiteboxProbe compiled against `classpath`, compiled once per source and
    classpath into the kit's cache directory; BadInput when javac cannot compile it there (no TCK)."""
    from rstck.protocols.jvm.process import compiled_once

    return compiled_once(_TCK_PROBE_SOURCE, _TCK_PROBE_CLASS, classpath, "jvm-tck-probe",
                         "javac could not compile the kit's stand-in for the JVM TCK's WhiteboxSubscriberProbe against "
                         "the classpath (is reactive-streams-tck on it?)")
