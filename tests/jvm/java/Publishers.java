// The project's JVM reference publishers and their mutants, named as `rstck check jvm:Publishers$Range` names them.
// Range: a synchronous range publisher (a work-in-progress drain loop on the caller's thread, demand in an
// AtomicLong); Async: the same loop run on an executor per subscription, as JVM libraries do. A mutant breaks one rule.

import java.util.Objects;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Flow;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

public final class Publishers {
    enum Fault { NONE, OVER_DELIVERY, SIGNAL_AFTER_TERMINAL, NON_POSITIVE_IGNORED, REQUEST_THROWS, NULL_ACCEPTED }

    /** The JVM TCK's factory names, for one style and one fault. */
    public abstract static class Factory {
        final boolean async; final Fault fault;
        Factory(boolean async, Fault fault) { this.async = async; this.fault = fault; }
        public Flow.Publisher<Long> createFlowPublisher(long n) { return new RangePublisher(n, async, fault, false); }
        public Flow.Publisher<Long> createFailedFlowPublisher() { return new RangePublisher(0, async, fault, true); }
        public long maxElementsFromPublisher() { return Long.MAX_VALUE - 1; }
        public long boundedDepthOfOnNextAndRequestRecursion() { return 1; }
    }

    public static final class Range extends Factory { public Range() { super(false, Fault.NONE); } }
    public static final class Async extends Factory { public Async() { super(true, Fault.NONE); } }
    public static final class OverDelivery extends Factory { public OverDelivery() { super(false, Fault.OVER_DELIVERY); } }
    public static final class SignalAfterTerminal extends Factory {
        public SignalAfterTerminal() { super(false, Fault.SIGNAL_AFTER_TERMINAL); } }
    public static final class NonPositiveIgnored extends Factory {
        public NonPositiveIgnored() { super(false, Fault.NON_POSITIVE_IGNORED); } }
    public static final class RequestThrows extends Factory { public RequestThrows() { super(false, Fault.REQUEST_THROWS); } }
    public static final class NullAccepted extends Factory { public NullAccepted() { super(false, Fault.NULL_ACCEPTED); } }

    static final class RangePublisher implements Flow.Publisher<Long> {
        final long n; final boolean async; final Fault fault; final boolean failed;
        RangePublisher(long n, boolean async, Fault fault, boolean failed) {
            this.n = n; this.async = async; this.fault = fault; this.failed = failed;
        }
        @Override public void subscribe(Flow.Subscriber<? super Long> subscriber) {
            if (fault == Fault.NULL_ACCEPTED && subscriber == null) return;
            Objects.requireNonNull(subscriber, "subscriber");  // 1.9
            new RangeSubscription(subscriber, this).start();
        }
    }

    static final class RangeSubscription implements Flow.Subscription, Runnable {
        final Flow.Subscriber<? super Long> downstream; final RangePublisher from;
        final AtomicLong requested = new AtomicLong(); final AtomicInteger wip = new AtomicInteger();
        final AtomicBoolean cancelled = new AtomicBoolean(); final AtomicBoolean requestedOnce = new AtomicBoolean();
        final ExecutorService executor;
        volatile Throwable badRequest; long next; boolean started, done;

        RangeSubscription(Flow.Subscriber<? super Long> downstream, RangePublisher from) {
            this.downstream = downstream; this.from = from;
            this.executor = from.async ? Executors.newSingleThreadExecutor(r -> {
                Thread t = new Thread(r, "range-publisher"); t.setDaemon(true); return t; }) : null;
        }

        void start() { drain(); }

        @Override public void request(long n) {
            if (from.fault == Fault.REQUEST_THROWS && !requestedOnce.compareAndSet(false, true)) {
                throw new IllegalStateException("request called twice");
            }
            if (n <= 0) {
                if (from.fault == Fault.NON_POSITIVE_IGNORED) return;
                badRequest = new IllegalArgumentException("3.9: request(" + n + ")");
            } else {
                requested.getAndUpdate(r -> r + n < 0 ? Long.MAX_VALUE : r + n);  // 3.17
            }
            drain();
        }

        @Override public void cancel() { cancelled.set(true); drain(); }

        void drain() {
            if (wip.getAndIncrement() != 0) return;
            if (executor == null) run();
            else if (!executor.isShutdown()) executor.execute(this);  // once terminated, calls are no-ops (3.6, 3.7)
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
            if (badRequest != null) { terminate(badRequest); return; }
            long slack = from.fault == Fault.OVER_DELIVERY ? 1 : 0;
            long emitted = 0;
            while (next < from.n && emitted < requested.get() + slack && !cancelled.get() && badRequest == null) {
                try {
                    downstream.onNext(next++);
                } catch (Throwable thrown) {  // 2.13: the subscriber is cancelled, the error made known
                    cancelled.set(true);
                    thrown.printStackTrace();
                }
                emitted++;
            }
            if (badRequest != null && !cancelled.get()) { terminate(badRequest); return; }
            requested.addAndGet(-Math.min(emitted, requested.get()));
            if (slack > 0) requested.set(0);
            if (next >= from.n && !cancelled.get()) terminate(null);
        }

        private void terminate(Throwable error) {
            finish();
            if (error != null) downstream.onError(error); else downstream.onComplete();
            if (from.fault == Fault.SIGNAL_AFTER_TERMINAL) downstream.onComplete();
        }

        private void finish() {
            done = true;
            if (executor != null) executor.shutdown();
        }
    }

    /** The JDK's own publisher: its items are submitted, on a thread of the factory's, once a subscriber came. */
    public static final class Submission {
        public Flow.Publisher<Long> createFlowPublisher(long n) {
            java.util.concurrent.SubmissionPublisher<Long> publisher = new java.util.concurrent.SubmissionPublisher<>();
            AtomicBoolean fed = new AtomicBoolean();
            return subscriber -> {
                publisher.subscribe(subscriber);  // throws NullPointerException for null (1.9)
                if (!fed.compareAndSet(false, true)) return;
                Thread feeder = new Thread(() -> {
                    for (long i = 0; i < n; i++) publisher.submit(i);
                    publisher.close();
                }, "submission-feeder");
                feeder.setDaemon(true);
                feeder.start();
            };
        }
        public long maxElementsFromPublisher() { return 1024; }
    }
}
