# ---- The JVM's side, written out (rstck/reports/repro/jvm_runtime.py): the Java class's factories called in a JVM
# this script starts with the classpath below, through py4j (pip install py4j) and a JDK (`java`, `javac`). A few
# lines of Java start py4j's pinned-thread ClientServer, so a request made inside onNext stays a re-entrant call on
# the Java thread that delivered onNext, as in rstck; they are compiled with javac at first run into a temporary
# folder. The kit's recorders reach Java as Subscriber proxies, its sources' subscriptions as Subscription proxies
# and its observer as a Subscriber told what was processed; Java's publishers, subscribers, processors,
# subscriptions and throwables are stand-ins. The implementation's threads are Java's, read through the JVM's
# ThreadMXBean: py4j's Python threads only carry their calls into the script.

import hashlib
import secrets
import shutil
import socket
import subprocess
import tempfile

JAVA_BRIDGE = "RstckReproBridge"
JAVA_BRIDGE_SOURCE = r"""
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.lang.ref.WeakReference;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Flow;
import py4j.ClientServer;

public final class RstckReproBridge {
    private final ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    private final Set<Long> ownThreads = new HashSet<>();
    private final Map<Long, WeakReference<Object>> subscribers = new ConcurrentHashMap<>();  // by the script's keys

    public static void main(String[] args) throws Exception {
        RstckReproBridge bridge = new RstckReproBridge();
        ClientServer server = new ClientServer.ClientServerBuilder(bridge).javaPort(0)
                .pythonPort(Integer.parseInt(args[0])).authToken(System.getenv("RSTCK_JVM_TOKEN")).build();
        for (ThreadInfo info : bridge.threads.dumpAllThreads(false, false)) bridge.ownThreads.add(info.getThreadId());
        System.out.println("port " + server.getJavaServer().getListeningPort());
        System.out.flush();
        while (System.in.read() != -1) { }  // the script ended
        Runtime.getRuntime().halt(0);
    }

    public Object newInstance(String className) throws Exception {
        return Class.forName(className, true, ClassLoader.getSystemClassLoader()).getDeclaredConstructor().newInstance();
    }

    /** The public methods of `className` that take no argument or one, as "name(parameter) returnType" lines. */
    public String methods(String className) throws Exception {
        StringBuilder out = new StringBuilder();
        for (Method method : Class.forName(className, false, ClassLoader.getSystemClassLoader()).getMethods()) {
            Class<?>[] parameters = method.getParameterTypes();
            if (parameters.length > 1) continue;
            out.append(method.getName()).append('(').append(parameters.length == 1 ? parameters[0].getName() : "")
               .append(") ").append(method.getReturnType().getName()).append('\n');
        }
        return out.toString();
    }

    /** publisher.subscribe(subscriber), watching the very proxy the publisher is handed, weakly, under `key` (py4j
     *  makes a new Java proxy at each crossing): `released` says once nothing in the JVM references it (3.13). */
    @SuppressWarnings("unchecked")
    public void subscribe(Object publisher, Object subscriber, long key, String family) throws Throwable {
        subscribers.put(key, new WeakReference<>(subscriber));
        if (family.startsWith("java.util.concurrent.Flow")) {
            ((Flow.Publisher<Object>) publisher).subscribe((Flow.Subscriber<Object>) subscriber);
            return;
        }
        ClassLoader loader = publisher.getClass().getClassLoader();
        Method subscribe = Class.forName(family + "Publisher", false, loader)
                .getMethod("subscribe", Class.forName(family + "Subscriber", false, loader));
        try {
            subscribe.invoke(publisher, subscriber);
        } catch (InvocationTargetException thrown) {
            throw thrown.getCause();
        }
    }

    /** Collects garbage, then the keys of the subscribers nothing in the JVM references any more, space-separated;
     *  null when the JVM did not collect (System.gc() disabled, as -XX:+DisableExplicitGC does). */
    public String released() {
        WeakReference<Object> collected = new WeakReference<>(new Object());
        for (int attempt = 0; attempt < 3 && collected.get() != null; attempt++) System.gc();
        if (collected.get() != null) return null;
        StringBuilder keys = new StringBuilder();
        subscribers.forEach((key, subscriber) -> { if (subscriber.get() == null) keys.append(key).append(' '); });
        return keys.toString().trim();
    }

    /** The implementation's threads, a line each: id, kind, where, and how often it waited or blocked so far (a
     *  thread woken in between has moved on). Kinds: "parked" (an untimed wait, an idle pool worker), "timer",
     *  "blocked", "callback" (inside a call to the script), "running". The calling thread is left out: called
     *  from inside a callback, this runs on the Java thread that made the callback (pinned threads). */
    public String threadStates() {
        StringBuilder out = new StringBuilder();
        long caller = Thread.currentThread().getId();
        for (ThreadInfo info : threads.dumpAllThreads(false, false)) {
            StackTraceElement[] stack = info.getStackTrace();
            int n = stack.length;
            if (info.getThreadId() == caller || ownThreads.contains(info.getThreadId())
                    || (n >= 2 && stack[n - 2].getClassName().startsWith("py4j."))) continue;  // py4j's serve the script
            out.append(info.getThreadId()).append('\t').append(kind(info.getThreadState(), stack)).append('\t')
               .append(n > 0 ? stack[0].toString() : "").append('\t')
               .append(info.getWaitedCount() + info.getBlockedCount()).append('\n');
        }
        return out.toString();
    }

    private static String kind(Thread.State state, StackTraceElement[] stack) {
        switch (state) {
            case RUNNABLE: return calls(stack, "py4j.CallbackClient", "py4j.ClientServerConnection.sendCommand",
                                        "py4j.reflection.PythonProxyHandler.invoke") ? "callback" : "running";
            case BLOCKED: return "blocked";
            case WAITING: return "parked";
            case TIMED_WAITING:
                boolean idleWorker = calls(stack, "java.util.concurrent.ThreadPoolExecutor.getTask",
                                           "java.util.concurrent.ForkJoinPool.awaitWork")
                        && !calls(stack, "java.util.concurrent.ScheduledThreadPoolExecutor$DelayedWorkQueue.take");
                return idleWorker ? "parked" : "timer";
            default: return "running";
        }
    }

    private static boolean calls(StackTraceElement[] stack, String... methods) {
        for (StackTraceElement frame : stack) {
            for (String method : methods) {
                if ((frame.getClassName() + "." + frame.getMethodName()).startsWith(method)) return true;
            }
        }
        return false;
    }

    public String throwableChain(Throwable thrown) {
        StringBuilder out = new StringBuilder();
        for (Class<?> kind = thrown.getClass(); kind != null && Throwable.class.isAssignableFrom(kind);
             kind = kind.getSuperclass()) out.append(kind.getSimpleName()).append('\n');
        return out.append('\n').append(String.valueOf(thrown.getMessage())).toString();
    }

    public Throwable throwable(String kind, String message) throws Exception {
        return (Throwable) Class.forName(kind).getConstructor(String.class).newInstance(message);
    }
}
"""
JVM_START_S = 60.0
LONG_MAX, LONG_MIN = 2**63 - 1, -2**63
FLOW, REACTIVE_STREAMS = "java.util.concurrent.Flow$", "org.reactivestreams."
_PUBLISHERS = ("createFlowPublisher(long)", "createPublisher(long)")
_FAILED_PUBLISHERS = ("createFailedFlowPublisher()", "createFailedPublisher()")
_WHITEBOX_SUBSCRIBERS = (f"createWhiteboxFlowSubscriber({FLOW}Subscriber)",
                         f"createWhiteboxSubscriber({REACTIVE_STREAMS}Subscriber)")
_PROCESSORS = ("createIdentityFlowProcessor(int)", "createIdentityProcessor(int)")
# What rstck calls, by the name a trace shows -> the methods of the JVM TCK's verification classes that serve it,
# the Flow form first. A black-box subscriber is made by the white-box factory where the class has only that one,
# as rstck makes it (its observer is the script's, and judged by nobody).
JVM_FACTORIES = {
    **dict.fromkeys(("createFlowPublisher", "createPublisher"), _PUBLISHERS),
    **dict.fromkeys(("createFailedFlowPublisher", "createFailedPublisher"), _FAILED_PUBLISHERS),
    **dict.fromkeys(("createFlowSubscriber", "createSubscriber"),
                    ("createFlowSubscriber()", "createSubscriber()", *_WHITEBOX_SUBSCRIBERS)),
    **dict.fromkeys(("createWhiteboxFlowSubscriber", "createWhiteboxSubscriber"), _WHITEBOX_SUBSCRIBERS),
    **dict.fromkeys(("createIdentityFlowProcessor", "createIdentityProcessor"), _PROCESSORS),
}
ELEMENT_FACTORY = "createElement(int)"
_jvm = {}  # "bridge", "gateway", "child": the one JVM of this script
_thrown_by_the_script = []  # (Java throwable, the Python exception it carries): given back as that exception


def _java_tool(name):
    home = os.environ.get("JAVA_HOME")
    found = os.path.join(home, "bin", name) if home and os.path.isfile(os.path.join(home, "bin", name)) else \
        shutil.which(name)
    if not found:
        raise CannotRun(f"`{name}` is not on PATH and $JAVA_HOME is not set: a JDK is needed")
    return found


def _compiled_bridge(py4j_jar):
    digest = hashlib.sha256((JAVA_BRIDGE_SOURCE + py4j_jar).encode()).hexdigest()[:16]
    folder = os.path.join(tempfile.gettempdir(), f"rstck-repro-jvm-{digest}")
    if os.path.isfile(os.path.join(folder, JAVA_BRIDGE + ".class")):
        return folder
    staging = tempfile.mkdtemp(prefix="rstck-repro-jvm-")
    with open(os.path.join(staging, JAVA_BRIDGE + ".java"), "w") as source:
        source.write(JAVA_BRIDGE_SOURCE)
    done = subprocess.run([_java_tool("javac"), "-nowarn", "-cp", py4j_jar, "-d", staging, source.name],
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise CannotRun(f"javac could not compile the script's bridge: {done.stderr.strip()[:400]}")
    try:
        os.replace(staging, folder)  # another run may have won the race: either copy serves
    except OSError:
        return staging
    return folder


def start_jvm(classpath):
    """A JVM with `classpath`, the script's bridge and py4j's jar, connected through py4j's ClientServer."""
    try:
        from py4j.clientserver import ClientServer, JavaParameters, PythonParameters
        from py4j.java_gateway import find_jar_path
    except ImportError:
        raise CannotRun("py4j is not installed: pip install py4j") from None
    import logging

    logging.getLogger("py4j").setLevel(logging.CRITICAL)  # it logs every error a recorder raises on purpose
    jar = find_jar_path()
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        python_port = probe.getsockname()[1]
    token = secrets.token_hex(16)
    path = os.pathsep.join([_compiled_bridge(jar), jar, *classpath])
    child = subprocess.Popen([_java_tool("java"), "-cp", path, JAVA_BRIDGE, str(python_port)], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env={**os.environ, "RSTCK_JVM_TOKEN": token})
    said = []
    reader = threading.Thread(target=lambda: said.append(child.stdout.readline()), daemon=True)
    reader.start()
    reader.join(JVM_START_S)
    if not said or not said[0].startswith("port "):
        child.kill()
        raise CannotRun(f"the JVM did not start: {child.stderr.read().strip()[:400] if said else 'no answer'}")
    gateway = ClientServer(
        java_parameters=JavaParameters(port=int(said[0].split()[1]), auth_token=token, auto_convert=True),
        python_parameters=PythonParameters(port=python_port, auth_token=token, daemonize=True,
                                           daemonize_connections=True, propagate_java_exceptions=True))
    _jvm.update(bridge=gateway.entry_point, gateway=gateway, child=child)
    return gateway.entry_point


_java_error_classes = {}


def java_error(throwable):
    """A Java throwable as a Python exception named like its class, over its superclasses' (so that a rule's
    NullPointerException or IllegalArgumentException is matched by name, a superclass's included); one the script
    threw or signalled itself comes back as itself."""
    for thrown, carried in _thrown_by_the_script:
        if thrown.equals(throwable):
            return carried
    names, _, message = _jvm["bridge"].throwableChain(throwable).partition("\n\n")
    base = Exception
    for name in reversed(names.split()):
        base = _java_error_classes.setdefault((base, name), type(name, (base,), {}))
    error = base("" if message == "null" else message)
    error.java_object = throwable
    return error


def _java_call(method, *args):
    from py4j.protocol import Py4JJavaError

    try:
        return method(*args)
    except Py4JJavaError as exc:  # the implementation's throwable, as its stand-in
        raise java_error(exc.java_exception) from None


# The Java exception a Python one of the script's is thrown as (the rules' names: 1.9, 2.13, 3.9), as rstck's.
JAVA_FOR_PYTHON = {TypeError: "java.lang.NullPointerException", ValueError: "java.lang.IllegalArgumentException"}


def _as_throwable(error, kind="java.lang.RuntimeException"):
    """The Java throwable for a Python exception of the script's (a Java one's stand-in: its own); it comes back to
    Python as itself."""
    throwable = getattr(error, "java_object", None)
    if throwable is None:
        throwable = _jvm["bridge"].throwable(kind, f"{type(error).__name__}: {error}")
        _thrown_by_the_script.append((throwable, error))
    return throwable


def _thrown_in_java(exc):
    """What a recording object raised (on purpose, or a violation that stops the scenario), thrown in Java as a real
    Java exception."""
    from py4j.protocol import Py4JJavaError

    kind = next((java for python, java in JAVA_FOR_PYTHON.items() if isinstance(exc, python)),
                "java.lang.RuntimeException")
    return Py4JJavaError(str(exc), _as_throwable(exc, kind))


class JavaElements:
    """The elements the script sends a Java subscriber or processor: the class's createElement(int)'s, where it has
    that method, else the script's integers. What comes back out of Java (a processor's downstream, the white-box
    observer) is read back as the integer it was made from, as rstck reads it."""

    def __init__(self, instance=None):
        self.instance = instance
        self._made = {}

    def to_java(self, item):
        if self.instance is None or not isinstance(item, int) or isinstance(item, bool):
            return item
        made = self.instance.createElement(item)
        try:
            self._made.setdefault(made, item)
        except TypeError:  # a Java object: not hashable in Python
            pass
        return made

    def from_java(self, item):
        try:
            return self._made.get(item, item)
        except TypeError:
            return item


# The py4j ids of the Java subscriptions the scenario let go of: released in Java at once by expect_collected, not by
# py4j's worker a moment later (a Java subscription may reference its subscriber).
_let_go_of = []


class JavaSubscription:
    """The implementation's subscription, which it handed a recorder."""

    def __init__(self, java_object):
        self.java_object = java_object
        weakref.finalize(self, _let_go_of.append, java_object._target_id)  # no call into Java from a finalizer

    def request(self, n):
        # Java's request takes a long: a demand beyond one is the largest long of its sign, as rstck sends it.
        _java_call(self.java_object.request, max(min(n, LONG_MAX), LONG_MIN))

    def cancel(self):
        _java_call(self.java_object.cancel)


class InJava:
    """A recording object of the script's as Java sees it (`in_java` sets the Java interface): what it raises is
    thrown in Java as a real exception; it is equal to itself only, in Java too."""

    def __init__(self, subject, elements=None):
        self.subject, self.elements = subject, elements or JavaElements()

    def _forward(self, call, *args):
        try:
            call(*args)
        except BaseException as exc:  # noqa: BLE001 - Java gets a real exception, as from rstck's objects
            raise _thrown_in_java(exc) from None

    def equals(self, other):  # an object of the script's comes back to Python as itself
        return isinstance(other, InJava) and other.subject is self.subject

    def hashCode(self):  # noqa: N802 - Java's names
        return hash(id(self.subject)) & 0x7FFFFFFF

    def toString(self):  # noqa: N802
        return f"reproducer {self.subject.name}"


class SubscriberInJava(InJava):
    """A recorder: the Java publisher's (or processor's) signals are its own."""

    def onSubscribe(self, subscription):  # noqa: N802
        self._forward(self.subject.on_subscribe, None if subscription is None else JavaSubscription(subscription))

    def onNext(self, item):  # noqa: N802
        self._forward(self.subject.on_next, self.elements.from_java(item))

    def onError(self, throwable):  # noqa: N802
        self._forward(self.subject.on_error, None if throwable is None else java_error(throwable))

    def onComplete(self):  # noqa: N802
        self._forward(self.subject.on_complete)


class SubscriptionInJava(InJava):
    """The subscription a source of the script's hands a Java subscriber: its request and cancel are the Java
    subscriber's, made on the thread it made them on."""

    def request(self, n):
        self._forward(self.subject.request, n)

    def cancel(self):
        self._forward(self.subject.cancel)


class ObserverInJava(InJava):
    """The white-box observer: a Subscriber the subscriber under test tells each signal once processed."""

    def onSubscribe(self, subscription):  # noqa: N802
        self._forward(self.subject.on_subscribe_processed)

    def onNext(self, item):  # noqa: N802
        self._forward(self.subject.on_next_processed, self.elements.from_java(item))

    def onError(self, throwable):  # noqa: N802
        self._forward(self.subject.on_error_processed, None if throwable is None else java_error(throwable))

    def onComplete(self):  # noqa: N802
        self._forward(self.subject.on_complete_processed)


_in_java_classes = {}


def in_java(kind, subject, family, interface, elements=None):
    """`subject` as a Java proxy of `kind` implementing `family`'s `interface` (one Python class per triple)."""
    cls = _in_java_classes.get((kind, family, interface))
    if cls is None:
        java = type("Java", (), {"implements": [family + interface]})
        cls = _in_java_classes[kind, family, interface] = type(kind.__name__, (kind,), {"Java": java})
    return cls(subject, elements)


_handed_to_java = {}  # key -> the recorder whose proxy the bridge watches under that key (3.13)


class JavaPublisher:
    """The implementation's publisher: subscribe hands Java a proxy of the recorder (equal to the recorder's other
    proxies in Java) through the bridge, which watches it (3.13: expect_collected)."""

    def __init__(self, java_object, family, elements=None):
        self.java_object, self.family, self.elements = java_object, family, elements

    def subscribe(self, recorder):
        if recorder is None:
            _java_call(self.java_object.subscribe, None)
            return
        key = len(_handed_to_java) + 1
        _handed_to_java[key] = recorder
        proxy = in_java(SubscriberInJava, recorder, self.family, "Subscriber", self.elements)
        _java_call(_jvm["bridge"].subscribe, self.java_object, proxy, key, self.family)


class JavaSubscriber:
    """The implementation's subscriber, signalled by a source of the script's: each signal is the Java call, with the
    source's subscription as a Java proxy (the same one each time) and its elements made by createElement."""

    def __init__(self, java_object, family, elements):
        self.java_object, self.family, self.elements = java_object, family, elements
        self._subscriptions = {}

    def on_subscribe(self, subscription):
        proxy = None
        if subscription is not None:
            proxy = self._subscriptions.get(id(subscription))
            if proxy is None or proxy.subject is not subscription:
                proxy = self._subscriptions[id(subscription)] = in_java(SubscriptionInJava, subscription,
                                                                        self.family, "Subscription")
        _java_call(self.java_object.onSubscribe, proxy)

    def on_next(self, item):
        _java_call(self.java_object.onNext, None if item is None else self.elements.to_java(item))

    def on_error(self, error):
        _java_call(self.java_object.onError, None if error is None else _as_throwable(error))

    def on_complete(self):
        _java_call(self.java_object.onComplete)


class JavaProcessor(JavaSubscriber, JavaPublisher):
    """The implementation's processor: a Java subscriber upstream, a Java publisher downstream."""


class JvmFactories:
    """The Java class's factory methods, each called on a fresh instance of the class, as rstck calls them; a
    subscriber's or processor's elements are made by the same instance's createElement(int), where it has it."""

    def __init__(self, bridge, class_name):
        self.bridge, self.class_name = bridge, class_name
        self.bridge.newInstance(class_name)  # loads the class; a missing one says so here
        self.methods = dict(line.split(" ", 1) for line in bridge.methods(class_name).splitlines())
        for asked, signatures in JVM_FACTORIES.items():
            found = next((signature for signature in signatures if signature in self.methods), None)
            if found is not None:
                setattr(self, asked, self._factory(found))

    def _factory(self, signature):
        name, _, parameter = signature.rstrip(")").partition("(")
        family = REACTIVE_STREAMS if self.methods[signature].startswith(REACTIVE_STREAMS) else FLOW
        white_box = parameter.endswith("Subscriber")

        def make_it(*args):
            instance = self.bridge.newInstance(self.class_name)
            elements = JavaElements(instance if ELEMENT_FACTORY in self.methods else None)
            if white_box:  # its observer: the scenario's, else one of its own that nobody judges
                observer = args[0] if args else Observer("observer")
                args = (in_java(ObserverInJava, observer, family, "Subscriber", elements),)
            made = _java_call(getattr(instance, name), *args)
            if made is None:
                raise CannotRun(f"{name} returned null")
            if "Processor" in name:
                return JavaProcessor(made, family, elements)
            if "Subscriber" in name:
                return JavaSubscriber(made, family, elements)
            return JavaPublisher(made, family)

        make_it.__name__ = name
        return make_it


def _foreign_threads():
    """None in Python: the implementation's threads are Java's (_java_threads); py4j's Python threads only carry
    their calls into the script, and those calls are the implementation's."""
    return []


def _java_threads():
    """The implementation's Java threads, as (id, kind, where, waits) (the bridge's threadStates)."""
    return [tuple(line.split("\t")) for line in _jvm["bridge"].threadStates().splitlines()]


# How long the implementation's Java threads must stay parked, unwoken, before a settle believes it: a thread woken a
# moment ago may not have run yet.
PARKED_CONFIRM_S = 0.01
_python_settle = settle


def _java_quiet(end, parked_for_s):
    """Wait until every Java thread of the implementation's is parked (an untimed wait, an idle pool worker) and has
    stayed so, unwoken, for `parked_for_s`, or, with a thread on a timer or blocked, until nothing has moved for
    QUIET_S; a thread running, or a call between Java and the script under way, is waited for. Bounded by `end`."""
    snapshot, since = None, time.monotonic()
    while time.monotonic() < end:
        threads = _java_threads()
        with _lock:
            seen = (threads, len(_transcript))
        busy = bool(_under_way_elsewhere()) or any(kind in ("running", "callback") for _, kind, _, _ in threads)
        now = time.monotonic()
        if seen != snapshot or busy:
            snapshot, since = seen, now
        parked = all(kind == "parked" for _, kind, _, _ in threads)
        if now - since >= (parked_for_s if parked else QUIET_S):
            return True
        time.sleep(0.002)
    return False


def settle():
    """Settle as rstck's JVM adapter does: once the implementation's Java threads are quiet (_java_quiet), bounded by
    the check's deadline."""
    _java_quiet(time.monotonic() + _config["deadline_s"], PARKED_CONFIRM_S)
    _python_settle()


def _awaited(arrived):
    """Whether an expected signal came: while it has not, waited for until the implementation's Java threads have
    been quiet for QUIET_S (a thread unparked a moment ago reads as parked until it runs), bounded by the check's
    deadline; only an implementation that fails pays for the wait."""
    end = time.monotonic() + _config["deadline_s"]
    snapshot, since = None, time.monotonic()
    while not arrived() and time.monotonic() < end:
        threads = _java_threads()
        with _lock:
            seen = (threads, len(_transcript))
        now = time.monotonic()
        if seen != snapshot or _under_way_elsewhere() or any(t[1] in ("running", "callback") for t in threads):
            snapshot, since = seen, now
        elif now - since >= QUIET_S:
            break
        time.sleep(0.002)
    return arrived()


def linger(why, actor=None):
    """Hold this thread (inside a signal or a call) until a Java thread of the implementation's calls `actor` (the
    recorder or subscription that lingers; anyone, for None), or every such thread is parked, or each has stayed
    blocked (or inside a call to the script) at one place for STUCK_S, or LINGER_BOUND_S passes: the window a race
    needs, held open as rstck holds it on the JVM."""
    started = since = time.monotonic()
    end = started + LINGER_BOUND_S
    seen = _numbers["seq"]
    stable, ended_by = None, "bound"
    while time.monotonic() < end:
        if _implementation_signalled(seen, actor):
            ended_by = "signal"
            break
        threads = _java_threads()
        kinds = {kind for _, kind, _, _ in threads}
        if kinds <= {"parked"}:
            ended_by = "idle"
            break
        held = [thread for thread in threads if thread[1] in ("blocked", "callback")]
        now = time.monotonic()
        if held != stable:
            stable, since = held, now
        elif kinds <= {"parked", "blocked", "callback"} and now - since >= STUCK_S:
            ended_by = "blocked"
            break
        time.sleep(0.001)
    note(f"lingered {(time.monotonic() - started) * 1000:.1f} ms {why}: ended by {ended_by}")


def expect_collected(alive, name, rule):
    """3.13 on the JVM: once the scenario let go of the cancelled recorder and of its subscription (and py4j of the
    Java subscription), the JVM, made to collect garbage, no longer references any Subscriber proxy the publisher
    was handed for it. The recorder itself stays alive in Python (py4j keeps a proxy's Python object until Java
    finalizes the proxy): the JVM's side is what says whether the publisher dropped it."""
    gc.collect()
    client = _jvm["gateway"]._gateway_client
    while _let_go_of:
        object_id = _let_go_of.pop()
        try:
            client.garbage_collect_object(object_id, False)  # py4j's ClientServer: at once, not queued
        except TypeError:
            client.garbage_collect_object(object_id)
    settle()
    recorder = alive()
    keys = [key for key, handed in _handed_to_java.items() if handed is recorder]
    if recorder is None or not keys:
        return
    released = _jvm["bridge"].released()
    if released is None:
        raise CannotRun("the JVM did not collect garbage when asked (System.gc() is disabled, as "
                        "-XX:+DisableExplicitGC does): whether the publisher dropped the subscriber cannot be seen")
    kept = [key for key in keys if str(key) not in released.split()]
    if kept:
        fail(rule, f"{name} to be collectable once cancelled",
             "the JVM still references it (the Subscriber the publisher was handed) while the publisher is alive")


def jvm_target(spec):
    """The Java class `jvm:CLASS` names, in a JVM with the classpath $RSTCK_CLASSPATH, else the one rstck ran with."""
    classpath = os.environ.get("RSTCK_CLASSPATH", "").split(os.pathsep) if os.environ.get("RSTCK_CLASSPATH") \
        else _config["classpath"]
    return JvmFactories(start_jvm([entry for entry in classpath if entry]), spec.split(":", 1)[1])
