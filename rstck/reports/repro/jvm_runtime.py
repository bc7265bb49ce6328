# ---- The JVM's side, written out (rstck/reports/repro/jvm_runtime.py): the Java class's factories called in a JVM
# this script starts with the classpath below, through py4j (pip install py4j) and a JDK (`java`, `javac`). A few
# lines of Java start py4j's pinned-thread ClientServer, so a request made inside onNext stays a re-entrant call on
# the Java thread that delivered onNext, as in rstck; they are compiled with javac at first run into a temporary
# folder. The kit's recorders reach Java as Subscriber proxies; Java's subscriptions and throwables are stand-ins.

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
import java.lang.reflect.Method;
import java.util.HashSet;
import java.util.Set;
import py4j.ClientServer;

public final class RstckReproBridge {
    private final ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    private final Set<Long> ownThreads = new HashSet<>();

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

    public boolean hasMethod(String className, String name, boolean takesLong) throws Exception {
        for (Method method : Class.forName(className, false, ClassLoader.getSystemClassLoader()).getMethods()) {
            Class<?>[] parameters = method.getParameterTypes();
            if (method.getName().equals(name) && parameters.length == (takesLong ? 1 : 0)
                    && (!takesLong || parameters[0] == long.class)) return true;
        }
        return false;
    }

    public boolean isInstance(String className, Object value) throws Exception {
        return value != null && Class.forName(className, false, value.getClass().getClassLoader()).isInstance(value);
    }

    /** The implementation's threads, a line each: "parked" (an untimed wait, an idle pool worker) or "busy",
     *  and how often it waited so far (a thread woken in between has moved on). */
    public String threadStates() {
        StringBuilder out = new StringBuilder();
        for (ThreadInfo info : threads.dumpAllThreads(false, false)) {
            StackTraceElement[] stack = info.getStackTrace();
            int n = stack.length;
            if (ownThreads.contains(info.getThreadId()) || (n >= 2 && stack[n - 2].getClassName().startsWith("py4j.")))
                continue;  // the JVM's, or py4j's serving the script's calls
            boolean idleWorker = info.getThreadState() == Thread.State.TIMED_WAITING
                    && calls(stack, "java.util.concurrent.ThreadPoolExecutor.getTask", "java.util.concurrent.ForkJoinPool.awaitWork")
                    && !calls(stack, "java.util.concurrent.ScheduledThreadPoolExecutor$DelayedWorkQueue.take");
            boolean parked = info.getThreadState() == Thread.State.WAITING || idleWorker;
            out.append(info.getThreadId()).append(parked ? " parked " : " busy ")
               .append(info.getWaitedCount() + info.getBlockedCount()).append('\n');
        }
        return out.toString();
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
# The factory names of the JVM TCK's verification classes, the Flow form first (what rstck calls, by the name a
# trace shows).
JVM_FACTORIES = {"createFlowPublisher": ("createFlowPublisher", "createPublisher"),
                 "createPublisher": ("createFlowPublisher", "createPublisher"),
                 "createFailedFlowPublisher": ("createFailedFlowPublisher", "createFailedPublisher"),
                 "createFailedPublisher": ("createFailedFlowPublisher", "createFailedPublisher")}
_jvm = {}  # "bridge", "gateway", "child": the one JVM of this script
_thrown_on_purpose = []  # (Java throwable, the Python exception it carries): given back as that exception


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
    NullPointerException or IllegalArgumentException is matched by name, a superclass's included)."""
    for thrown, carried in _thrown_on_purpose:
        if thrown.equals(throwable):
            return carried
    names, _, message = _jvm["bridge"].throwableChain(throwable).partition("\n\n")
    base = Exception
    for name in reversed(names.split()):
        base = _java_error_classes.setdefault((base, name), type(name, (base,), {}))
    return base("" if message == "null" else message)


def _java_call(method, *args):
    from py4j.protocol import Py4JJavaError

    try:
        return method(*args)
    except Py4JJavaError as exc:  # the implementation's throwable, as its stand-in
        raise java_error(exc.java_exception) from None


def _thrown_in_java(exc):
    """What a recorder raised (on purpose, or a violation that stops the scenario), thrown in Java as a real
    RuntimeException; it comes back to Python as itself."""
    from py4j.protocol import Py4JJavaError

    throwable = _jvm["bridge"].throwable("java.lang.RuntimeException", f"{type(exc).__name__}: {exc}")
    _thrown_on_purpose.append((throwable, exc))
    return Py4JJavaError(str(exc), throwable)


class JavaSubscription:
    """The implementation's subscription, which it handed a recorder."""

    def __init__(self, java_object):
        self.java_object = java_object

    def request(self, n):
        # Java's request takes a long: a demand beyond one is the largest long of its sign, as rstck sends it.
        _java_call(self.java_object.request, max(min(n, LONG_MAX), LONG_MIN))

    def cancel(self):
        _java_call(self.java_object.cancel)


class SubscriberInJava:
    """A recorder as Java sees it: a proxy implementing the publisher's Subscriber interface (its `Java` class is
    set per interface family by `_subscriber_in_java`)."""

    def __init__(self, recorder):
        self.recorder = recorder

    def _forward(self, signal, *args):
        try:
            signal(*args)
        except BaseException as exc:  # noqa: BLE001 - Java gets a real exception, as from rstck's probe
            raise _thrown_in_java(exc) from None

    def onSubscribe(self, subscription):  # noqa: N802 - Java's names
        self._forward(self.recorder.on_subscribe, None if subscription is None else JavaSubscription(subscription))

    def onNext(self, item):  # noqa: N802
        self._forward(self.recorder.on_next, item)

    def onError(self, throwable):  # noqa: N802
        self._forward(self.recorder.on_error, None if throwable is None else java_error(throwable))

    def onComplete(self):  # noqa: N802
        self._forward(self.recorder.on_complete)

    def equals(self, other):  # a proxy of the script's comes back to Python as itself
        return isinstance(other, SubscriberInJava) and other.recorder is self.recorder

    def hashCode(self):  # noqa: N802
        return hash(id(self.recorder)) & 0x7FFFFFFF

    def toString(self):  # noqa: N802
        return f"reproducer {self.recorder.name}"


_subscriber_classes = {}


def _subscriber_in_java(recorder, family):
    cls = _subscriber_classes.get(family)
    if cls is None:
        java = type("Java", (), {"implements": [family + "Subscriber"]})
        cls = _subscriber_classes[family] = type("SubscriberInJava", (SubscriberInJava,), {"Java": java})
    return cls(recorder)


class JavaPublisher:
    """The implementation's publisher: subscribe hands Java one proxy per recorder (equal to itself in Java)."""

    def __init__(self, java_object, family):
        self.java_object, self.family = java_object, family
        self._proxies = {}

    def subscribe(self, recorder):
        if recorder is None:
            _java_call(self.java_object.subscribe, None)
            return
        proxy = self._proxies.setdefault(id(recorder), _subscriber_in_java(recorder, self.family))
        _java_call(self.java_object.subscribe, proxy)


class JvmFactories:
    """The Java class's factory methods, each called on a fresh instance of the class, as rstck calls them."""

    def __init__(self, bridge, class_name):
        self.bridge, self.class_name = bridge, class_name
        self.bridge.newInstance(class_name)  # loads the class; a missing one says so here
        for asked, names in JVM_FACTORIES.items():
            takes_long = "Failed" not in asked
            found = next((name for name in names if bridge.hasMethod(class_name, name, takes_long)), None)
            if found is not None:
                setattr(self, asked, self._factory(found))

    def _factory(self, name):
        def make_publisher(*args):
            made = getattr(self.bridge.newInstance(self.class_name), name)(*args)
            if made is None:
                return None
            flow = self.bridge.isInstance("java.util.concurrent.Flow$Publisher", made)
            return JavaPublisher(made, "java.util.concurrent.Flow$" if flow else "org.reactivestreams.")

        make_publisher.__name__ = name
        return make_publisher


# How long the implementation's Java threads must stay parked, unwoken, before a settle believes it: a thread woken a
# moment ago may not have run yet.
PARKED_CONFIRM_S = 0.01
_python_settle = settle


def settle():
    """Settle as rstck's JVM adapter does: once every Java thread the implementation started is parked (an untimed
    wait, an idle pool worker) and stayed so for PARKED_CONFIRM_S; a thread running, on a timer or blocked is waited
    for until nothing has moved for QUIET_S (bounded by the check's deadline). py4j's Python threads are the
    script's: they carry Java's calls into the recorders, which the script's own settling waits for."""
    end = time.monotonic() + _config["deadline_s"]
    snapshot, since = None, time.monotonic()
    while time.monotonic() < end:
        _kit_threads.update(_foreign_threads())
        states = _jvm["bridge"].threadStates()
        with _lock:
            now_seen = (states, len(_transcript), len(_handling), len(_outstanding))
        now = time.monotonic()
        if now_seen != snapshot:
            snapshot, since = now_seen, now
        parked = all(line.split()[1] == "parked" for line in states.splitlines())
        if now - since >= (PARKED_CONFIRM_S if parked else QUIET_S):
            break
        time.sleep(0.002)
    _python_settle()


def jvm_target(spec):
    """The Java class `jvm:CLASS` names, in a JVM with the classpath $RSTCK_CLASSPATH, else the one rstck ran with."""
    classpath = os.environ.get("RSTCK_CLASSPATH", "").split(os.pathsep) if os.environ.get("RSTCK_CLASSPATH") \
        else _config["classpath"]
    return JvmFactories(start_jvm([entry for entry in classpath if entry]), spec.split(":", 1)[1])
