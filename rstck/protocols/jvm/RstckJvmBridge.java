// The kit's side of the JVM bridge: starts py4j's pinned-thread ClientServer (a Java call made inside a Python
// callback runs on the Java thread that made the callback), loads the target's class, and reads the JVM's threads.
// Compiled from source at first use (rstck/protocols/jvm/process.py); the JVM ends when its parent closes stdin.

import java.io.File;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.lang.ref.WeakReference;
import java.lang.reflect.Constructor;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.net.MalformedURLException;
import java.net.URL;
import java.net.URLClassLoader;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Flow;
import py4j.ClientServer;

public final class RstckJvmBridge {
    // The loader of the user's classes: the system class loader in the kit's own JVM; on a JVM the kit shares
    // (Spark's), one of the kit's over the host's, grown by each classpath the kit is given (addClasspath).
    private static volatile ClassLoader LOADER = RstckJvmBridge.class.getClassLoader();
    private final ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    private final Set<Long> ownThreads = ConcurrentHashMap.newKeySet();  // read and grown by threadStates' callers
    // The kit's subscribers handed to publishers (their py4j proxies), weakly, by the kit's keys (3.13).
    private final Map<Long, WeakReference<Object>> subscribers = new ConcurrentHashMap<>();

    public static void main(String[] args) throws Exception {
        RstckJvmBridge bridge = new RstckJvmBridge();
        ClientServer server = new ClientServer.ClientServerBuilder(bridge).javaPort(0)
                .pythonPort(Integer.parseInt(args[0])).authToken(System.getenv("RSTCK_JVM_TOKEN")).build();
        bridge.leaveOutThreadsRunningNow();
        System.out.println("rstck-jvm-port " + server.getJavaServer().getListeningPort());
        System.out.flush();
        while (System.in.read() != -1) { }  // the parent is gone, or let go of the JVM
        Runtime.getRuntime().halt(0);
    }

    /** The threads running now are the JVM's, py4j's and a host's (Spark's), not the implementation's. */
    public void leaveOutThreadsRunningNow() {
        for (ThreadInfo info : threads.dumpAllThreads(false, false)) ownThreads.add(info.getThreadId());
    }

    /**
     * On a JVM the kit shares, py4j finds classes (its proxies' interfaces among them) through the kit's loader on
     * every thread whose context class loader that loader extends; a thread the host gave another loader keeps it.
     */
    public void lendLoaderToPy4j() {
        py4j.reflection.ReflectionUtil.setClassLoadingStrategy(new py4j.reflection.ClassLoadingStrategy() {
            public Class<?> classForName(String name) throws ClassNotFoundException {
                return Class.forName(name, true, getClassLoader());
            }
            public ClassLoader getClassLoader() {
                ClassLoader context = Thread.currentThread().getContextClassLoader();
                for (ClassLoader up = LOADER; up != null; up = up.getParent()) if (up == context) return LOADER;
                return context == null ? LOADER : context;
            }
        });
    }

    /** On a JVM the kit shares: `path`'s entries join the user's classes (a name two classpaths have is the first's:
     *  one loader per JVM, so that py4j, which caches methods by class name, never sees two classes of one name). */
    public synchronized void addClasspath(String path) throws Exception {
        if (!(LOADER instanceof Classpath)) LOADER = new Classpath(RstckJvmBridge.class.getClassLoader());
        for (String entry : path.split(File.pathSeparator)) ((Classpath) LOADER).add(new File(entry).toURI().toURL());
        USERS_CLASSES.clear();
    }

    private static final class Classpath extends URLClassLoader {
        Classpath(ClassLoader parent) { super("rstck", new URL[0], parent); }
        void add(URL entry) { addURL(entry); }
    }

    public Object newInstance(String className) throws Exception {
        Class<?> found = Class.forName(className, true, LOADER);
        return found.getDeclaredConstructor().newInstance();
    }

    private final Map<String, ClassLoader> compiledHelpers = new ConcurrentHashMap<>();

    /**
     * A new instance of `className`, a helper of the kit's compiled against the user's classpath into `directory`
     * (loaded through a class loader of its own over the one that loaded the user's classes, so it sees them), made
     * with its public constructor of one parameter.
     */
    public Object newHelper(String directory, String className, Object argument) throws Exception {
        ClassLoader loader = compiledHelpers.computeIfAbsent(directory, found -> {
            try {
                return new URLClassLoader(new URL[] {new File(found).toURI().toURL()}, LOADER);
            } catch (MalformedURLException bad) {
                throw new IllegalArgumentException(bad);
            }
        });
        for (Constructor<?> constructor : Class.forName(className, true, loader).getConstructors()) {
            if (constructor.getParameterCount() == 1) return constructor.newInstance(argument);
        }
        throw new NoSuchMethodException(className + " has no public constructor of one parameter");
    }

    /** The public methods of `className` that take no argument or one, as "name(parameter) returnType" lines. */
    public String methods(String className) throws Exception {
        StringBuilder out = new StringBuilder();
        for (Method method : Class.forName(className, false, LOADER).getMethods()) {
            Class<?>[] parameters = method.getParameterTypes();
            if (parameters.length > 1) continue;
            out.append(method.getName()).append('(').append(parameters.length == 1 ? parameters[0].getName() : "")
               .append(") ").append(method.getReturnType().getName()).append('\n');
        }
        return out.toString();
    }

    /**
     * publisher.subscribe(subscriber), for a subscriber of the kit's: py4j makes a new Java proxy at each crossing,
     * so this is the one crossing that hands the publisher its subscriber, and the one place that can watch that
     * very proxy, weakly, under `key` (`released` says once nothing in the JVM references it). `family` is the
     * interfaces' package prefix ("java.util.concurrent.Flow$" or "org.reactivestreams."). What subscribe throws
     * is thrown as it is.
     */
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

    /**
     * Collects garbage, then says which of the kit's subscribers nothing in the JVM references any more: their
     * keys, space-separated, forgotten from here on. Null when the JVM did not collect (System.gc() disabled, as
     * -XX:+DisableExplicitGC does): a reference that is still there then says nothing.
     */
    public String released() {
        WeakReference<Object> collected = new WeakReference<>(new Object());
        for (int attempt = 0; attempt < 3 && collected.get() != null; attempt++) System.gc();
        if (collected.get() != null) return null;
        StringBuilder keys = new StringBuilder();
        subscribers.entrySet().removeIf(entry -> {
            if (entry.getValue().get() != null) return false;
            keys.append(entry.getKey()).append(' ');
            return true;
        });
        return keys.toString().trim();
    }

    public boolean isInstance(String className, Object value) throws Exception {
        return value != null && Class.forName(className, false, value.getClass().getClassLoader()).isInstance(value);
    }

    /** The class chain of a throwable, most specific first, as "SimpleName FullName" lines, then its message. */
    public String throwableChain(Throwable thrown) {
        StringBuilder out = new StringBuilder();
        for (Class<?> kind = thrown.getClass(); kind != null && Throwable.class.isAssignableFrom(kind);
             kind = kind.getSuperclass()) {
            out.append(kind.getSimpleName()).append(' ').append(kind.getName()).append('\n');
        }
        return out.append('\n').append(String.valueOf(thrown.getMessage())).toString();
    }

    public Throwable throwable(String kind, String message) throws Exception {
        return (Throwable) Class.forName(kind).getConstructor(String.class).newInstance(message);
    }

    /**
     * What each of the implementation's threads is doing, one line each: id, kind, name, where, and how often it
     * waited or blocked so far (a thread woken in between has moved on). Kinds: "parked" (waiting untimed, or an
     * idle pool worker whose timed wait only ends the thread), "timer" (a timed wait elsewhere: sleep, a delayed
     * task), "blocked" (on a monitor), "callback" (inside a call to Python), "running". The calling thread is left
     * out: called from inside a callback, this runs on the thread that made the callback (pinned threads), which is
     * the caller's own, not one to wait for.
     */
    public String threadStates() {
        StringBuilder out = new StringBuilder();
        long caller = Thread.currentThread().getId();
        for (ThreadInfo info : threads.dumpAllThreads(false, false)) {
            StackTraceElement[] stack = info.getStackTrace();
            if (info.getThreadId() == caller || ownThreads.contains(info.getThreadId()) || servesPython(stack)) continue;
            if (runsOnlyHostCode(stack)) {  // the host's once, the host's when idle too
                ownThreads.add(info.getThreadId());
                continue;
            }
            out.append(info.getThreadId()).append('\t').append(kind(info.getThreadState(), stack)).append('\t')
               .append(info.getThreadName().replace('\t', ' ')).append('\t')
               .append(stack.length > 0 ? stack[0].toString() : "").append('\t')
               .append(info.getWaitedCount() + info.getBlockedCount()).append('\n');
        }
        return out.toString();
    }

    private static boolean servesPython(StackTraceElement[] stack) {
        // py4j's connection threads run Python's calls: their bottom frames are py4j's own.
        int n = stack.length;
        return n >= 2 && stack[n - 2].getClassName().startsWith("py4j.");
    }

    /** A thread the host (Spark) started later: it runs the host's code and none of the user's classpath. In the
     *  kit's own JVM every class outside the JDK is the user's, py4j's or the kit's, so none is the host's. */
    private static boolean runsOnlyHostCode(StackTraceElement[] stack) {
        boolean host = false;
        for (StackTraceElement frame : stack) {
            String loader = frame.getClassLoaderName();
            if (loader == null || loader.equals("platform") || frame.getClassName().startsWith("py4j.")) continue;
            if (loader.equals(LOADER.getName()) || onUsersClasspath(frame.getClassName())) return false;
            host = true;
        }
        return host;
    }

    private static final Map<String, Boolean> USERS_CLASSES = new ConcurrentHashMap<>();

    /** Whether the user's classpath has the class too, though the host's copy runs (the kit's loader asks the
     *  host's first): Netty's, say, when the user's library is built on it. */
    private static boolean onUsersClasspath(String className) {
        ClassLoader users = LOADER;
        return users instanceof URLClassLoader && USERS_CLASSES.computeIfAbsent(className, name ->
                ((URLClassLoader) users).findResource(name.replace('.', '/') + ".class") != null);
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
            String name = frame.getClassName() + "." + frame.getMethodName();
            for (String method : methods) {
                if (name.startsWith(method)) return true;
            }
        }
        return false;
    }
}
