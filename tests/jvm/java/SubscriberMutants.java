// JVM subscriber mutants, one fault each, named as `rstck check jvm:SubscriberMutants$NeverRequests` names them (the
// item each breaks: tests/jvm/test_jvm_mutants.py, docs/jvm.md#mutants). Most wrap the reference
// `Subscribers$Batched` (black and white box) in a subscriber that carries the fault; RaisesAfterCancel is a small
// subscriber of its own, since 2.8 needs one that cancels by itself.

import java.util.Objects;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Flow;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;

public final class SubscriberMutants {
    /** The reference subscriber, black and white box, reached through a wrapper of `wrap`'s making. */
    abstract static class Wrapped {
        final Function<Flow.Subscriber<String>, Flow.Subscriber<String>> wrap;
        Wrapped(Function<Flow.Subscriber<String>, Flow.Subscriber<String>> wrap) { this.wrap = wrap; }
        public Flow.Subscriber<String> createFlowSubscriber() { return wrap.apply(reference(null)); }
        public Flow.Subscriber<String> createWhiteboxFlowSubscriber(Flow.Subscriber<String> observer) {
            return wrap.apply(reference(observer));
        }
        public String createElement(int element) { return "element " + element; }
    }

    static Flow.Subscriber<String> reference(Flow.Subscriber<String> observer) {
        return new Subscribers.BatchedSubscriber(Subscribers.Fault.NONE, observer);
    }

    /** Passes every signal on to the reference; a mutant overrides the one it breaks. */
    static class Wrapper implements Flow.Subscriber<String> {
        final Flow.Subscriber<String> inner;
        volatile Flow.Subscription subscription;
        Wrapper(Flow.Subscriber<String> inner) { this.inner = inner; }
        @Override public void onSubscribe(Flow.Subscription s) {
            if (subscription == null) subscription = s;
            inner.onSubscribe(s);
        }
        @Override public void onNext(String item) { inner.onNext(item); }
        @Override public void onError(Throwable error) { inner.onError(error); }
        @Override public void onComplete() { inner.onComplete(); }
    }

    /** The subscription the reference gets in place of the real one: `request` as given. */
    static Flow.Subscription requesting(Flow.Subscription real, java.util.function.LongConsumer request) {
        return new Flow.Subscription() {
            @Override public void request(long n) { request.accept(n); }
            @Override public void cancel() { real.cancel(); }
        };
    }

    /** 2.1: its requests never reach the publisher. */
    public static final class NeverRequests extends Wrapped {
        public NeverRequests() {
            super(inner -> new Wrapper(inner) {
                @Override public void onSubscribe(Flow.Subscription s) { inner.onSubscribe(requesting(s, n -> { })); }
            });
        }
    }

    /** 2.1 (RECOMMENDED, batches): each request of the reference's batch is made as that many requests of one. */
    public static final class OneAtATime extends Wrapped {
        public OneAtATime() {
            super(inner -> new Wrapper(inner) {
                @Override public void onSubscribe(Flow.Subscription s) {
                    inner.onSubscribe(requesting(s, n -> { for (long i = 0; i < n; i++) s.request(1); }));
                }
            });
        }
    }

    // Longer than the kit's responsiveness bound (0.25 s) by a margin a loaded machine does not eat.
    static final long SLOW_MS = 600;

    /** 2.2 (RECOMMENDED): the first element is processed on the publisher's thread, slowly. */
    public static final class SlowFirstElement extends Wrapped {
        public SlowFirstElement() {
            super(inner -> new Wrapper(inner) {
                final AtomicBoolean slowed = new AtomicBoolean();
                @Override public void onNext(String item) {
                    if (!slowed.getAndSet(true)) {
                        try {
                            Thread.sleep(SLOW_MS);
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                    }
                    super.onNext(item);
                }
            });
        }
    }

    /** The async note: onComplete waits, on the publisher's thread, for something that never happens. */
    public static final class BlocksInOnComplete extends Wrapped {
        public BlocksInOnComplete() {
            super(inner -> new Wrapper(inner) {
                @Override public void onComplete() {
                    try {
                        new CountDownLatch(1).await();  // nothing ever counts it down
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                    super.onComplete();
                }
            });
        }
    }

    /** 2.3: onComplete cancels the subscription, from inside onComplete. */
    public static final class CancelsInOnComplete extends Wrapped {
        public CancelsInOnComplete() {
            super(inner -> new Wrapper(inner) {
                @Override public void onComplete() { subscription.cancel(); super.onComplete(); }
            });
        }
    }

    /** 2.10: onError before any element throws. */
    public static final class RaisesOnEarlyError extends Wrapped {
        public RaisesOnEarlyError() {
            super(inner -> new Wrapper(inner) {
                volatile boolean received;
                @Override public void onNext(String item) { received = true; super.onNext(item); }
                @Override public void onError(Throwable error) {
                    if (!received) throw new IllegalStateException("onError before any element");
                    super.onError(error);
                }
            });
        }
    }

    /**
     * 3.1: a synchronous subscriber that asks for more inside onNext, in batches, on the latest subscription any
     * subscriber of the class got: with two subscribers, one requests on the other's while it is being signalled.
     */
    public static final class SharedSubscription {
        static final int BATCH = 4;
        static volatile Flow.Subscription latest;  // the fault: one for the whole class, not one per subscriber
        public Flow.Subscriber<String> createFlowSubscriber() {
            return new Flow.Subscriber<>() {
                Flow.Subscription subscription; int received;
                @Override public void onSubscribe(Flow.Subscription s) {
                    Objects.requireNonNull(s, "onSubscribe(null)");  // 2.13
                    if (subscription != null) { s.cancel(); return; }  // 2.5
                    subscription = latest = s;
                    s.request(BATCH);
                }
                @Override public void onNext(String item) {
                    Objects.requireNonNull(item, "onNext(null)");  // 2.13
                    if (++received % BATCH == 0) latest.request(BATCH);
                }
                @Override public void onError(Throwable error) { Objects.requireNonNull(error, "onError(null)"); }
                @Override public void onComplete() { }
            };
        }
        public String createElement(int element) { return "element " + element; }
    }

    /** 2.8: cancels after its third element, and throws from every onNext that still comes. */
    public static final class RaisesAfterCancel {
        public Flow.Subscriber<String> createFlowSubscriber() {
            return new Flow.Subscriber<>() {
                Flow.Subscription subscription; int received; boolean cancelled;
                @Override public void onSubscribe(Flow.Subscription s) {
                    Objects.requireNonNull(s, "onSubscribe(null)");  // 2.13
                    if (subscription != null) { s.cancel(); return; }  // 2.5
                    subscription = s;
                    s.request(16);
                }
                @Override public void onNext(String item) {
                    Objects.requireNonNull(item, "onNext(null)");  // 2.13
                    if (cancelled) throw new IllegalStateException("onNext(" + item + ") after I cancelled");
                    if (++received == 3) { cancelled = true; subscription.cancel(); }
                }
                @Override public void onError(Throwable error) { Objects.requireNonNull(error, "onError(null)"); }
                @Override public void onComplete() { }
            };
        }
        public String createElement(int element) { return "element " + element; }
    }
}
