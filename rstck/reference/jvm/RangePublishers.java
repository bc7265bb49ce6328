// The kit's JVM reference publisher, in the two styles JVM libraries use, checked by `make check` as
// `rstck check 'jvm:RangePublishers$Range'` and `'jvm:RangePublishers$Async'` (docs/jvm.md). It has the JVM TCK's
// factory names, so the kit calls it as it calls a TCK test class, and needs nothing but the JDK.
//
// Range: a work-in-progress drain loop on the caller's thread, demand in an AtomicLong.
// Async: the same loop run on a single-thread executor per subscription, shut down once the stream ended.

import java.util.Objects;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Flow;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

public final class RangePublishers {
    private RangePublishers() { }

    /** The JVM TCK's factory names for one style. */
    public abstract static class Factory {
        private final boolean async;
        Factory(boolean async) { this.async = async; }
        public Flow.Publisher<Long> createFlowPublisher(long n) { return new RangePublisher(n, async, false); }
        public Flow.Publisher<Long> createFailedFlowPublisher() { return new RangePublisher(0, async, true); }
        public long maxElementsFromPublisher() { return Long.MAX_VALUE - 1; }
    }

    public static final class Range extends Factory { public Range() { super(false); } }
    public static final class Async extends Factory { public Async() { super(true); } }

    /** Publishes 0, 1, ..., n - 1 to each subscriber (or, failed, signals onError at once). */
    static final class RangePublisher implements Flow.Publisher<Long> {
        final long n; final boolean async; final boolean failed;
        RangePublisher(long n, boolean async, boolean failed) { this.n = n; this.async = async; this.failed = failed; }
        @Override public void subscribe(Flow.Subscriber<? super Long> subscriber) {
            Objects.requireNonNull(subscriber, "subscriber");  // 1.9
            new RangeSubscription(subscriber, this).drain();
        }
    }

    static final class RangeSubscription implements Flow.Subscription, Runnable {
        final Flow.Subscriber<? super Long> downstream; final RangePublisher from;
        final AtomicLong requested = new AtomicLong(); final AtomicInteger wip = new AtomicInteger();
        final AtomicBoolean cancelled = new AtomicBoolean();
        final ExecutorService executor;
        volatile Throwable badRequest;
        long next; boolean started, done;  // touched by the drain loop only, one thread at a time (wip)

        RangeSubscription(Flow.Subscriber<? super Long> downstream, RangePublisher from) {
            this.downstream = downstream; this.from = from;
            this.executor = from.async ? Executors.newSingleThreadExecutor(r -> {
                Thread t = new Thread(r, "range-publisher"); t.setDaemon(true); return t; }) : null;
        }

        @Override public void request(long n) {
            if (n <= 0) badRequest = new IllegalArgumentException("3.9: request(" + n + "), not positive");
            else requested.getAndUpdate(r -> r + n < 0 ? Long.MAX_VALUE : r + n);  // 3.17: capped, unbounded
            drain();
        }

        @Override public void cancel() { cancelled.set(true); drain(); }

        void drain() {  // a call made while the loop runs (re-entrant, or from another thread) only marks it to go on
            if (wip.getAndIncrement() != 0) return;
            if (executor == null) run();
            else if (!executor.isShutdown()) executor.execute(this);  // once ended, calls are no-ops (3.6, 3.7)
        }

        @Override public void run() {
            int missed = 1;
            do {
                emit();
                missed = wip.addAndGet(-missed);
            } while (missed != 0);
        }

        private void emit() {
            if (done) return;
            if (!started) { started = true; downstream.onSubscribe(this); }
            if (cancelled.get()) { finish(); return; }
            if (from.failed) { terminate(new RuntimeException("failed publisher")); return; }
            long emitted = 0;
            while (next < from.n && emitted < requested.get() && !cancelled.get() && badRequest == null) {
                try {
                    downstream.onNext(next++);
                } catch (Throwable thrown) {  // 2.13: the subscriber is cancelled, and the error made known
                    cancelled.set(true);
                    thrown.printStackTrace();
                }
                emitted++;
            }
            requested.addAndGet(-emitted);
            if (cancelled.get()) { finish(); return; }
            if (badRequest != null) { terminate(badRequest); return; }
            if (next >= from.n) terminate(null);
        }

        private void terminate(Throwable error) {
            finish();
            if (error != null) downstream.onError(error); else downstream.onComplete();
        }

        private void finish() {
            done = true;
            if (executor != null) executor.shutdown();
        }
    }
}
