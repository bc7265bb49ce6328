// JVM race mutants: each is correct whenever its threads happen to take turns, and breaks its rule only when a call
// lands while another thread's signal is in flight. The kit must provoke that window itself (schedule perturbation).
// EarlyOnNext (1.3): onSubscribe on the subscriber's thread, onNext on the subscription's executor as soon as there
// is demand, even while onSubscribe is still running. LostRequest (3.8): the drain loop reads the demand before
// onNext and writes it back after, so a request made from another thread during onNext is lost.

import java.util.Objects;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Flow;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

public final class Races {
    /** The JVM TCK's factory names, for one race. */
    public abstract static class Factory {
        final boolean earlyOnNext;
        Factory(boolean earlyOnNext) { this.earlyOnNext = earlyOnNext; }
        public Flow.Publisher<Long> createFlowPublisher(long n) {
            return subscriber -> {
                Objects.requireNonNull(subscriber, "subscriber");  // 1.9
                RacySubscription subscription = new RacySubscription(subscriber, n, earlyOnNext);
                if (earlyOnNext) subscriber.onSubscribe(subscription);  // on the caller's thread: the race of 1.3
                subscription.drain();
            };
        }
        public long maxElementsFromPublisher() { return Long.MAX_VALUE - 1; }
        public long boundedDepthOfOnNextAndRequestRecursion() { return 1; }
    }

    public static final class EarlyOnNext extends Factory { public EarlyOnNext() { super(true); } }
    public static final class LostRequest extends Factory { public LostRequest() { super(false); } }

    static final class RacySubscription implements Flow.Subscription, Runnable {
        final Flow.Subscriber<? super Long> downstream; final long n; final boolean earlyOnNext;
        final AtomicInteger wip = new AtomicInteger(); final AtomicBoolean cancelled = new AtomicBoolean();
        final ExecutorService executor = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "racy-publisher"); t.setDaemon(true); return t; });
        volatile long demand; volatile Thread delivering; long reentrant, next; boolean started, done;

        RacySubscription(Flow.Subscriber<? super Long> downstream, long n, boolean earlyOnNext) {
            this.downstream = downstream; this.n = n; this.earlyOnNext = earlyOnNext; this.started = earlyOnNext;
        }

        @Override public void request(long k) {
            if (k <= 0) {  // 3.9
                cancelled.set(true);
                if (!executor.isShutdown()) executor.execute(() -> fail(k));
                return;
            }
            if (!earlyOnNext && Thread.currentThread() == delivering) reentrant = add(reentrant, k);  // kept
            else synchronized (this) { demand = add(demand, k); }
            drain();
        }

        @Override public void cancel() { cancelled.set(true); drain(); }

        static long add(long a, long b) { return a + b < 0 ? Long.MAX_VALUE : a + b; }  // 3.17

        void drain() {
            if (wip.getAndIncrement() == 0 && !executor.isShutdown()) executor.execute(this);
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
            while (!cancelled.get() && next < n && demand > 0) {
                long seen = demand;  // LostRequest: read before onNext, written back after, the lost update of 3.8
                delivering = Thread.currentThread();
                downstream.onNext(next++);
                delivering = null;
                if (earlyOnNext) {
                    synchronized (this) { demand--; }
                } else {
                    demand = add(seen - 1, reentrant);
                    reentrant = 0;
                }
            }
            if (cancelled.get()) { finish(); return; }
            if (next >= n) { finish(); downstream.onComplete(); }
        }

        private void fail(long k) {
            if (done) return;
            finish();
            downstream.onError(new IllegalArgumentException("3.9: request(" + k + ")"));
        }

        private void finish() { done = true; executor.shutdown(); }
    }
}
