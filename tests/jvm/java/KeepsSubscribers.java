// Publishers that keep references to their subscribers (3.13), named as `rstck check jvm:KeepsSubscribers$Always`
// names them. Each is a synchronous range publisher (a work-in-progress drain loop on the caller's thread) that
// tracks its subscriptions; they differ only in what it keeps once a subscription has ended (cancelled, completed,
// failed). WhileActive keeps nothing (the reference); Always keeps every subscriber it was ever given;
// AfterTermination drops a subscriber from its active ones and keeps it in a list of finished ones.

import java.util.List;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Flow;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

public final class KeepsSubscribers {
    enum Keeping { WHILE_ACTIVE, ALWAYS, AFTER_TERMINATION }

    public abstract static class Factory {
        final Keeping keeping;
        Factory(Keeping keeping) { this.keeping = keeping; }
        public Flow.Publisher<Long> createFlowPublisher(long n) { return new TrackingPublisher(n, keeping); }
        public long maxElementsFromPublisher() { return Long.MAX_VALUE - 1; }
    }

    public static final class WhileActive extends Factory { public WhileActive() { super(Keeping.WHILE_ACTIVE); } }
    public static final class Always extends Factory { public Always() { super(Keeping.ALWAYS); } }
    public static final class AfterTermination extends Factory {
        public AfterTermination() { super(Keeping.AFTER_TERMINATION); } }

    static final class TrackingPublisher implements Flow.Publisher<Long> {
        final long n; final Keeping keeping;
        final List<RangeSubscription> active = new CopyOnWriteArrayList<>();
        final List<Flow.Subscriber<? super Long>> everSubscribed = new CopyOnWriteArrayList<>();
        final List<Flow.Subscriber<? super Long>> finished = new CopyOnWriteArrayList<>();

        TrackingPublisher(long n, Keeping keeping) { this.n = n; this.keeping = keeping; }

        @Override public void subscribe(Flow.Subscriber<? super Long> subscriber) {
            Objects.requireNonNull(subscriber, "subscriber");  // 1.9
            if (keeping == Keeping.ALWAYS) everSubscribed.add(subscriber);
            RangeSubscription subscription = new RangeSubscription(this, subscriber);
            active.add(subscription);
            subscription.drain();
        }

        /** The subscription ended: it is no longer tracked, and lets go of its subscriber. */
        void ended(RangeSubscription subscription) {
            active.remove(subscription);
            if (keeping == Keeping.AFTER_TERMINATION) finished.add(subscription.downstream);
            subscription.downstream = null;
        }
    }

    static final class RangeSubscription implements Flow.Subscription {
        final TrackingPublisher from;
        volatile Flow.Subscriber<? super Long> downstream;
        final AtomicLong requested = new AtomicLong();
        final AtomicInteger wip = new AtomicInteger();
        volatile boolean cancelled;
        volatile Throwable badRequest;
        long next; boolean started, done;

        RangeSubscription(TrackingPublisher from, Flow.Subscriber<? super Long> downstream) {
            this.from = from; this.downstream = downstream;
        }

        @Override public void request(long k) {
            if (k <= 0) badRequest = new IllegalArgumentException("3.9: request(" + k + ")");
            else requested.getAndUpdate(r -> r + k < 0 ? Long.MAX_VALUE : r + k);  // 3.17
            drain();
        }

        @Override public void cancel() { cancelled = true; drain(); }

        void drain() {
            if (wip.getAndIncrement() != 0) return;  // the loop running on this or another thread takes it on
            int missed = 1;
            do {
                emit();
                missed = wip.addAndGet(-missed);
            } while (missed != 0);
        }

        private void emit() {
            if (done) return;
            Flow.Subscriber<? super Long> subscriber = downstream;
            if (!started) { started = true; subscriber.onSubscribe(this); }
            while (next < from.n && requested.get() > 0 && !cancelled && badRequest == null) {
                try {
                    subscriber.onNext(next++);
                } catch (Throwable thrown) {  // 2.13: the subscriber is cancelled
                    cancelled = true;
                }
                requested.decrementAndGet();
            }
            if (cancelled) end();
            else if (badRequest != null) { end(); subscriber.onError(badRequest); }
            else if (next >= from.n) { end(); subscriber.onComplete(); }
        }

        private void end() {
            done = true;
            from.ended(this);
        }
    }
}
