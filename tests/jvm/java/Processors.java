// The project's JVM reference processor and its mutants, named as `rstck check jvm:Processors$Drain` names them.
// Drain: a single-subscriber identity processor in the style of JVM libraries: a work-in-progress drain loop
// (AtomicInteger) serves downstream demand (AtomicLong) from a queue, and every call on the upstream subscription is
// made inside that loop, so they never overlap; it prefetches `bufferSize` from upstream and replenishes by halves.
// A mutant breaks one rule.

import java.util.Objects;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Flow;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

public final class Processors {
    enum Fault { NONE, DROPS_AN_ELEMENT, ERROR_SWALLOWED, KEEPS_UPSTREAM_OPEN }

    /** The JVM TCK's factory names, for one fault. */
    public abstract static class Factory {
        final Fault fault;
        Factory(Fault fault) { this.fault = fault; }
        public Flow.Processor<Integer, Integer> createIdentityFlowProcessor(int bufferSize) {
            return new DrainProcessor(bufferSize, fault);
        }
        public Integer createElement(int element) { return element; }
    }

    public static final class Drain extends Factory { public Drain() { super(Fault.NONE); } }
    public static final class DropsAnElement extends Factory { public DropsAnElement() { super(Fault.DROPS_AN_ELEMENT); } }
    public static final class ErrorSwallowed extends Factory { public ErrorSwallowed() { super(Fault.ERROR_SWALLOWED); } }
    public static final class KeepsUpstreamOpen extends Factory {
        public KeepsUpstreamOpen() { super(Fault.KEEPS_UPSTREAM_OPEN); } }

    static final class DrainProcessor implements Flow.Processor<Integer, Integer> {
        final int bufferSize, replenishAt;
        final Fault fault;
        final Queue<Integer> queue = new ConcurrentLinkedQueue<>();
        final AtomicInteger wip = new AtomicInteger();
        final AtomicLong requested = new AtomicLong();
        final AtomicBoolean subscribed = new AtomicBoolean();
        volatile Flow.Subscription upstream;
        volatile Flow.Subscriber<? super Integer> downstream;
        volatile boolean done, cancelled;
        volatile Throwable error;  // set before done
        volatile Throwable rejected;  // a request(n <= 0) downstream (3.9)
        // Touched inside the drain loop only.
        boolean upstreamRequested, upstreamCancelled, terminated;
        int received, consumed;

        DrainProcessor(int bufferSize, Fault fault) {
            this.bufferSize = Math.max(2, bufferSize);
            this.replenishAt = this.bufferSize / 2;
            this.fault = fault;
        }

        // -- downstream: the publisher side ------------------------------------------------------------

        @Override public void subscribe(Flow.Subscriber<? super Integer> subscriber) {
            Objects.requireNonNull(subscriber, "subscribe(null)");  // 1.9
            if (!subscribed.compareAndSet(false, true)) {  // one subscriber only: refuse the next (1.9)
                subscriber.onSubscribe(new Flow.Subscription() {
                    @Override public void request(long n) { }
                    @Override public void cancel() { }
                });
                subscriber.onError(new IllegalStateException("this processor serves one subscriber"));
                return;
            }
            subscriber.onSubscribe(new Flow.Subscription() {
                @Override public void request(long n) {
                    if (n <= 0) {
                        rejected = new IllegalArgumentException("3.9: request(" + n + ")");
                    } else {
                        requested.getAndAccumulate(n, (have, more) -> have + more < 0 ? Long.MAX_VALUE : have + more);
                    }
                    drain();
                }
                @Override public void cancel() {
                    cancelled = true;
                    drain();
                }
            });
            downstream = subscriber;
            drain();
        }

        // -- upstream: the subscriber side -------------------------------------------------------------

        @Override public void onSubscribe(Flow.Subscription subscription) {
            Objects.requireNonNull(subscription, "onSubscribe(null)");  // 2.13
            if (upstream != null) {  // 2.5
                subscription.cancel();
                return;
            }
            upstream = subscription;
            drain();
        }

        @Override public void onNext(Integer item) {
            Objects.requireNonNull(item, "onNext(null)");  // 2.13
            if (fault == Fault.DROPS_AN_ELEMENT && ++received == 2) {
                consumed++;  // taken, never passed on
            } else {
                queue.offer(item);
            }
            drain();
        }

        @Override public void onError(Throwable throwable) {
            Objects.requireNonNull(throwable, "onError(null)");  // 2.13
            if (fault == Fault.ERROR_SWALLOWED) return;
            error = throwable;
            done = true;
            drain();
        }

        @Override public void onComplete() {
            done = true;
            drain();
        }

        // -- the drain loop: one thread at a time, every signal downstream and call upstream made here -------

        private void drain() {
            if (wip.getAndIncrement() != 0) return;
            int missed = 1;
            do {
                drainOnce();
                missed = wip.addAndGet(-missed);
            } while (missed != 0);
        }

        private void drainOnce() {
            Flow.Subscription up = upstream;
            if (terminated) {
                cancelUpstream(up);
                return;
            }
            if (up != null && !upstreamRequested && !cancelled) {
                upstreamRequested = true;
                up.request(bufferSize);  // a prefetch, before or after a downstream comes
            }
            Flow.Subscriber<? super Integer> down = downstream;
            if (cancelled) {
                queue.clear();
                cancelUpstream(up);
                downstream = null;  // 3.13: a subscriber that cancelled is dropped
                return;
            }
            if (down == null) return;
            long emitted = 0, wanted = requested.get();
            // A request(0) made inside onNext (re-entrant: this loop runs on) ends the stream at the next element.
            while (emitted != wanted && !cancelled && rejected == null) {
                Integer item = queue.poll();
                if (item == null) break;
                try {
                    down.onNext(item);
                } catch (Throwable thrown) {  // 2.13: the subscriber counts as cancelled; the upstream call returns
                    cancelled = true;
                    terminate(up);
                    return;
                }
                emitted++;
                if (++consumed >= replenishAt && up != null && !done) {
                    up.request(consumed);
                    consumed = 0;
                }
            }
            if (emitted != 0 && wanted != Long.MAX_VALUE) requested.addAndGet(-emitted);
            if (rejected != null && !cancelled) {
                terminate(up);
                down.onError(rejected);
                return;
            }
            if (done && queue.isEmpty() && !cancelled) {
                terminated = true;
                downstream = null;  // ended: nothing more goes to it
                Throwable failure = error;
                if (failure != null) down.onError(failure); else down.onComplete();
            }
        }

        private void terminate(Flow.Subscription up) {
            terminated = true;
            queue.clear();
            cancelUpstream(up);
        }

        private void cancelUpstream(Flow.Subscription up) {
            if (up != null && !upstreamCancelled && !done && fault != Fault.KEEPS_UPSTREAM_OPEN) {
                upstreamCancelled = true;
                up.cancel();  // 2.6: a single-use processor whose subscriber is gone has no use for its upstream
            }
        }
    }
}
