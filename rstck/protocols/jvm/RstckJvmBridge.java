// The kit's side of the JVM bridge: starts py4j's pinned-thread ClientServer (a Java call made inside a Python
// callback runs on the Java thread that made the callback), loads the target's class, and reads the JVM's threads.
// Compiled from source at first use (rstck/protocols/jvm/process.py); the JVM ends when its parent closes stdin.

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.lang.reflect.Method;
import java.util.HashSet;
import java.util.Set;
import py4j.ClientServer;

public final class RstckJvmBridge {
    private final ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    private final Set<Long> ownThreads = new HashSet<>();

    public static void main(String[] args) throws Exception {
        RstckJvmBridge bridge = new RstckJvmBridge();
        ClientServer server = new ClientServer.ClientServerBuilder(bridge).javaPort(0)
                .pythonPort(Integer.parseInt(args[0])).authToken(System.getenv("RSTCK_JVM_TOKEN")).build();
        for (ThreadInfo info : bridge.threads.dumpAllThreads(false, false)) {
            bridge.ownThreads.add(info.getThreadId());  // the JVM's and py4j's threads, not the implementation's
        }
        System.out.println("rstck-jvm-port " + server.getJavaServer().getListeningPort());
        System.out.flush();
        while (System.in.read() != -1) { }  // the parent is gone, or let go of the JVM
        Runtime.getRuntime().halt(0);
    }

    public Object newInstance(String className) throws Exception {
        Class<?> found = Class.forName(className, true, ClassLoader.getSystemClassLoader());
        return found.getDeclaredConstructor().newInstance();
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
