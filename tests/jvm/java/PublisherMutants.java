// JVM publisher mutants, one fault each, named as `rstck check jvm:PublisherMutants$SlowCancel` names them (the
// item each breaks: tests/jvm/test_jvm_mutants.py, docs/jvm.md#mutants). Most put a relay between the reference
// `Publishers$Range` and its subscriber, as an adapter or operator of a JVM library does, with the fault in the
// relay; the others are small publishers of their own where the fault is in how elements are delivered.

import java.util.Objects;
import java.util.concurrent.Flow;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

public final class PublisherMutants {
    /** The reference publisher and failed publisher, each subscriber reached through a relay of `relay`'s making. */
    abstract static class Relayed {
        final Supplier<Relay> relay;
        Relayed(Supplier<Relay> relay) { this.relay = relay; }
        public Flow.Publisher<Long> createFlowPublisher(long n) { return relayed(reference(n, false)); }
        public Flow.Publisher<Long> createFailedFlowPublisher() { return relayed(reference(0, true)); }
        public long maxElementsFromPublisher() { return Long.MAX_VALUE - 1; }
        public long boundedDepthOfOnNextAndRequestRecursion() { return 1; }

        Flow.Publisher<Long> relayed(Flow.Publisher<Long> source) {
            return subscriber -> {
                Objects.requireNonNull(subscriber, "subscriber");  // 1.9
                Relay made = relay.get();
                made.downstream = subscriber;
                source.subscribe(made);
            };
        }
    }

    static Flow.Publisher<Long> reference(long n, boolean failed) {
        return new Publishers.RangePublisher(n, false, Publishers.Fault.NONE, failed);
    }

    /** Passes every signal and call through unchanged; a mutant overrides the one it breaks. */
    static class Relay implements Flow.Subscriber<Long>, Flow.Subscription {
        Flow.Subscriber<? super Long> downstream;
        volatile Flow.Subscription upstream;
        @Override public void onSubscribe(Flow.Subscription subscription) {
            upstream = subscription;
            downstream.onSubscribe(this);
        }
        @Override public void onNext(Long item) { downstream.onNext(item); }
        @Override public void onError(Throwable error) { downstream.onError(error); }
        @Override public void onComplete() { downstream.onComplete(); }
        @Override public void request(long n) { upstream.request(n); }
        @Override public void cancel() { upstream.cancel(); }
    }

    static void sleep(long millis) {
        try { Thread.sleep(millis); } catch (InterruptedException e) { Thread.currentThread().interrupt(); }
    }

    // Longer than the kit's responsiveness bound (0.25 s) by a margin a loaded machine does not eat.
    static final long SLOW_MS = 600;

    /** 1.4: the failed publisher completes instead of signalling onError. */
    public static final class FailedCompletes extends Relayed {
        public FailedCompletes() { super(Relay::new); }
        @Override public Flow.Publisher<Long> createFailedFlowPublisher() { return reference(0, false); }
    }

    /** 1.5: the end of a finite stream is never signalled. */
    public static final class NeverCompletes extends Relayed {
        public NeverCompletes() {
            super(() -> new Relay() { @Override public void onComplete() { } });
        }
    }

    /** 1.6: a cancel after the stream ended signals onError ("already ended") instead of being a NOP. */
    public static final class ErrorWhenCancelledAfterEnd extends Relayed {
        public ErrorWhenCancelledAfterEnd() {
            super(() -> new Relay() {
                volatile boolean ended;
                @Override public void onComplete() { ended = true; super.onComplete(); }
                @Override public void onError(Throwable error) { ended = true; super.onError(error); }
                @Override public void cancel() {
                    if (ended) downstream.onError(new IllegalStateException("the stream has already ended"));
                    else super.cancel();
                }
            });
        }
    }

    /** 1.10: only the first subscriber gets the elements; every later one gets an empty stream. */
    public static final class OnlyFirstSubscriberServed extends Relayed {
        public OnlyFirstSubscriberServed() { super(Relay::new); }
        @Override public Flow.Publisher<Long> createFlowPublisher(long n) {
            AtomicBoolean served = new AtomicBoolean();
            return subscriber -> reference(served.getAndSet(true) ? 0 : n, false).subscribe(subscriber);
        }
    }

    /** 2.12: onSubscribe is signalled twice. */
    public static final class OnSubscribeTwice extends Relayed {
        public OnSubscribeTwice() {
            super(() -> new Relay() {
                @Override public void onSubscribe(Flow.Subscription subscription) {
                    super.onSubscribe(subscription);
                    downstream.onSubscribe(this);
                }
            });
        }
    }

    /** 2.13: an exception the subscriber throws from onNext is swallowed on its way back, so the publisher never
     * learns of it and goes on signalling to that subscriber. */
    public static final class SwallowsSubscriberError extends Relayed {
        public SwallowsSubscriberError() {
            super(() -> new Relay() {
                @Override public void onNext(Long item) {
                    try { downstream.onNext(item); } catch (RuntimeException ignored) { }
                }
            });
        }
    }

    /** 3.2: request made from inside onNext (re-entrant) throws. */
    public static final class ReentrantRequestThrows extends Relayed {
        public ReentrantRequestThrows() {
            super(() -> new Relay() {
                volatile Thread delivering;
                @Override public void onNext(Long item) {
                    delivering = Thread.currentThread();
                    try { downstream.onNext(item); } finally { delivering = null; }
                }
                @Override public void request(long n) {
                    if (delivering == Thread.currentThread()) {
                        throw new IllegalStateException("request is not re-entrant");
                    }
                    super.request(n);
                }
            });
        }
    }

    /** 3.4 (SHOULD): the first request takes longer than the caller's responsiveness bound to return. */
    public static final class SlowFirstRequest extends Relayed {
        public SlowFirstRequest() {
            super(() -> new Relay() {
                final AtomicBoolean slowed = new AtomicBoolean();
                @Override public void request(long n) {
                    if (!slowed.getAndSet(true)) sleep(SLOW_MS);
                    super.request(n);
                }
            });
        }
    }

    /** 3.5: cancel takes longer than the caller's responsiveness bound to return. */
    public static final class SlowCancel extends Relayed {
        public SlowCancel() {
            super(() -> new Relay() { @Override public void cancel() { sleep(SLOW_MS); super.cancel(); } });
        }
    }

    /** 3.6: a request after cancel reopens the relay, and what the publisher still had for it arrives. The cancel
     * only closes the relay (the upstream is never cancelled). */
    public static final class RequestAfterCancelDelivers extends Relayed {
        public RequestAfterCancelDelivers() {
            super(() -> new Relay() {
                volatile boolean closed;
                @Override public void onNext(Long item) { if (!closed) super.onNext(item); }
                @Override public void onError(Throwable error) { if (!closed) super.onError(error); }
                @Override public void onComplete() { if (!closed) super.onComplete(); }
                @Override public void cancel() { closed = true; }
                @Override public void request(long n) { closed = false; super.request(n); }
            });
        }
    }

    /** 3.7: a second cancel signals onComplete. */
    public static final class SecondCancelCompletes extends Relayed {
        public SecondCancelCompletes() {
            super(() -> new Relay() {
                final AtomicInteger cancels = new AtomicInteger();
                @Override public void cancel() {
                    if (cancels.incrementAndGet() == 2) downstream.onComplete();
                    else super.cancel();
                }
            });
        }
    }

    /** 3.9 (SHOULD, the message): the error for request(n <= 0) says nothing of why. */
    public static final class UnhelpfulRequestError extends Relayed {
        public UnhelpfulRequestError() {
            super(() -> new Relay() {
                @Override public void onError(Throwable error) {
                    boolean rejected = error instanceof IllegalArgumentException;
                    super.onError(rejected ? new IllegalArgumentException("oops") : error);
                }
            });
        }
    }

    /** 3.12: cancel is ignored: the elements already requested keep coming. */
    public static final class CancelIgnored extends Relayed {
        public CancelIgnored() {
            super(() -> new Relay() { @Override public void cancel() { } });
        }
    }

    /** 3.15: cancel cancels, then throws. */
    public static final class CancelThrows extends Relayed {
        public CancelThrows() {
            super(() -> new Relay() {
                @Override public void cancel() {
                    super.cancel();
                    throw new IllegalStateException("cancelled, and complaining about it");
                }
            });
        }
    }

    /** 3.17: demand is passed on as an `int`, so a demand beyond 2^31-1 arrives truncated (2^63-1 as -1). */
    public static final class IntDemand extends Relayed {
        public IntDemand() {
            super(() -> new Relay() { @Override public void request(long n) { super.request((int) n); } });
        }
    }

    /**
     * 3.3: the naive synchronous publisher, delivering inside request with no trampoline, so a request made
     * inside onNext recurses into onNext again, as deep as the demand goes; `maxDepth` bounds that recursion
     * (the demand added beyond it is served by the outer call's loop).
     */
    static final class Naive implements Flow.Publisher<Long> {
        final long n; final int maxDepth;
        Naive(long n, int maxDepth) { this.n = n; this.maxDepth = maxDepth; }

        @Override public void subscribe(Flow.Subscriber<? super Long> subscriber) {
            Objects.requireNonNull(subscriber, "subscriber");  // 1.9
            new Flow.Subscription() {
                long demand, next; int depth; boolean done;
                { subscriber.onSubscribe(this); deliver(); }

                @Override public synchronized void request(long k) {
                    if (done) return;
                    if (k <= 0) {
                        done = true;
                        subscriber.onError(new IllegalArgumentException("3.9: request(" + k + ") must be positive"));
                        return;
                    }
                    demand = demand + k < 0 ? Long.MAX_VALUE : demand + k;  // 3.17
                    deliver();
                }

                @Override public synchronized void cancel() { done = true; }

                private void deliver() {
                    if (depth >= maxDepth) return;
                    depth++;
                    try {
                        while (!done && demand > 0 && next < n) {
                            demand--;
                            try {
                                subscriber.onNext(next++);  // a request made in there recurses into this loop
                            } catch (Throwable thrown) {  // 2.13: the subscriber counts as cancelled
                                done = true;
                            }
                        }
                        if (!done && next >= n) {
                            done = true;
                            subscriber.onComplete();
                        }
                    } finally {
                        depth--;
                    }
                }
            };
        }
    }

    abstract static class NaiveFactory extends Relayed {
        final int maxDepth;
        NaiveFactory(int maxDepth) { super(Relay::new); this.maxDepth = maxDepth; }
        @Override public Flow.Publisher<Long> createFlowPublisher(long n) { return new Naive(n, maxDepth); }
    }

    /** 3.3: onNext and request recurse without bound (and so 3.3's recommended depth of 1 is not kept either). */
    public static final class UnboundedRecursion extends NaiveFactory {
        public UnboundedRecursion() { super(Integer.MAX_VALUE); }
    }

    /** 3.3 (RECOMMENDED, depth one): the recursion is bounded, at a depth of 3. */
    public static final class DepthThree extends NaiveFactory {
        public DepthThree() { super(3); }
    }

    /**
     * 1.8: every subscriber of a publisher is served from one pump, which each request drives for all of them;
     * cancel only marks a subscription, which the pump serves no longer for its own demand but still for
     * another's.
     */
    public static final class PumpsCancelledSubscribers extends Relayed {
        public PumpsCancelledSubscribers() { super(Relay::new); }
        @Override public Flow.Publisher<Long> createFlowPublisher(long n) { return new Pump(n); }
    }

    static final class Pump implements Flow.Publisher<Long> {
        final long n;
        final java.util.List<Pumped> everyone = new java.util.concurrent.CopyOnWriteArrayList<>();
        final AtomicInteger wip = new AtomicInteger();
        Pump(long n) { this.n = n; }

        final class Pumped implements Flow.Subscription {
            final Flow.Subscriber<? super Long> subscriber;
            volatile long demand; long next; volatile boolean cancelled, done; volatile Throwable rejected;
            Pumped(Flow.Subscriber<? super Long> subscriber) { this.subscriber = subscriber; }
            @Override public void request(long k) {
                if (k <= 0) rejected = new IllegalArgumentException("3.9: request(" + k + ") must be positive");
                else synchronized (this) { demand = demand + k < 0 ? Long.MAX_VALUE : demand + k; }  // 3.17
                pump(this);
            }
            @Override public void cancel() { cancelled = true; }
        }

        @Override public void subscribe(Flow.Subscriber<? super Long> subscriber) {
            Objects.requireNonNull(subscriber, "subscriber");  // 1.9
            Pumped subscription = new Pumped(subscriber);
            everyone.add(subscription);
            subscriber.onSubscribe(subscription);
            pump(subscription);
        }

        /** The drain loop of every subscription at once; `requester` is the one whose call drives it. */
        void pump(Pumped requester) {
            if (wip.getAndIncrement() != 0) return;
            int missed = 1;
            do {
                for (Pumped s : everyone) {
                    // the fault: a subscription's cancel is looked at only when its own request drives the pump
                    if (s.done || (s == requester && s.cancelled)) continue;
                    while (s.rejected == null && s.demand > 0 && s.next < n) {
                        synchronized (s) { s.demand--; }
                        try {
                            s.subscriber.onNext(s.next++);
                        } catch (Throwable thrown) {  // 2.13: the subscriber counts as cancelled
                            s.cancelled = true;
                            break;
                        }
                        if (s == requester && s.cancelled) break;
                    }
                    if (s.rejected != null && !s.cancelled) { s.done = true; s.subscriber.onError(s.rejected); }
                    else if (s.next >= n && !s.cancelled) { s.done = true; s.subscriber.onComplete(); }
                }
                missed = wip.addAndGet(-missed);
            } while (missed != 0);
        }
    }
}
