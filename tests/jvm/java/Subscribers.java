// The project's JVM reference subscriber and its mutants, named as `rstck check jvm:Subscribers$Batched` names them.
// Batched: every signal is handed to a single-thread executor of the subscriber's own (a happens-before edge for
// each), which requests in batches of BATCH; its elements are strings made by createElement(int), and its white-box
// form tells a Flow.Subscriber observer what it has processed. A mutant breaks one rule.

import java.util.Objects;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Flow;

public final class Subscribers {
    enum Fault { NONE, OVERLAPPING_REQUESTS, SECOND_SUBSCRIPTION_KEPT, ON_NEXT_THROWS, ON_COMPLETE_THROWS,
                 PROCESSED_TWICE }

    static final int BATCH = 8;

    /** The JVM TCK's factory names (the white box in rstck's form), for one fault. */
    public abstract static class Factory {
        final Fault fault;
        Factory(Fault fault) { this.fault = fault; }
        public Flow.Subscriber<String> createFlowSubscriber() { return new BatchedSubscriber(fault, null); }
        public Flow.Subscriber<String> createWhiteboxFlowSubscriber(Flow.Subscriber<String> observer) {
            return new BatchedSubscriber(fault, observer);
        }
        public String createElement(int element) { return "element " + element; }
    }

    public static final class Batched extends Factory { public Batched() { super(Fault.NONE); } }
    public static final class OverlappingRequests extends Factory {
        public OverlappingRequests() { super(Fault.OVERLAPPING_REQUESTS); } }
    public static final class SecondSubscriptionKept extends Factory {
        public SecondSubscriptionKept() { super(Fault.SECOND_SUBSCRIPTION_KEPT); } }
    public static final class OnNextThrows extends Factory { public OnNextThrows() { super(Fault.ON_NEXT_THROWS); } }
    public static final class OnCompleteThrows extends Factory {
        public OnCompleteThrows() { super(Fault.ON_COMPLETE_THROWS); } }
    public static final class ProcessedTwice extends Factory { public ProcessedTwice() { super(Fault.PROCESSED_TWICE); } }

    /**
     * A synchronous subscriber that requests one more inside each onNext, on the thread that delivered it, and
     * remembers that thread: the kit's tests see where its request runs.
     */
    public static final class RequestsInOnNext {
        volatile long onNextThread = -1;
        public long lastOnNextThread() { return onNextThread; }
        public Flow.Subscriber<Integer> createFlowSubscriber() {
            return new Flow.Subscriber<>() {
                Flow.Subscription subscription;
                @Override public void onSubscribe(Flow.Subscription s) { subscription = s; s.request(1); }
                @Override public void onNext(Integer item) {
                    onNextThread = Thread.currentThread().getId();
                    subscription.request(1);
                }
                @Override public void onError(Throwable error) { }
                @Override public void onComplete() { }
            };
        }
    }

    static final class BatchedSubscriber implements Flow.Subscriber<String> {
        final Fault fault;
        final Flow.Subscriber<String> observer;  // null: black box
        final ExecutorService executor = Executors.newSingleThreadExecutor(runnable -> {
            Thread thread = new Thread(runnable, "batched-subscriber");
            thread.setDaemon(true);
            return thread;
        });
        // Read and written on the executor only, but the subscription is set on the caller's thread first.
        volatile Flow.Subscription subscription;
        volatile boolean terminated;  // its executor is shut down: a later signal (a publisher's fault) is dropped
        int outstanding;

        BatchedSubscriber(Fault fault, Flow.Subscriber<String> observer) { this.fault = fault; this.observer = observer; }

        @Override public void onSubscribe(Flow.Subscription s) {
            Objects.requireNonNull(s, "onSubscribe(null)");  // 2.13
            if (subscription != null) {  // 2.5: already subscribed
                if (fault != Fault.SECOND_SUBSCRIPTION_KEPT) s.cancel();
                return;
            }
            subscription = s;
            executor.execute(() -> {
                if (observer != null) observer.onSubscribe(s);
                request(BATCH);
            });
        }

        @Override public void onNext(String item) {
            Objects.requireNonNull(item, "onNext(null)");
            if (fault == Fault.ON_NEXT_THROWS) throw new IllegalStateException("the mutant throws from onNext");
            if (terminated) return;
            executor.execute(() -> {
                if (observer != null) {
                    observer.onNext(item);
                    if (fault == Fault.PROCESSED_TWICE) observer.onNext(item);
                }
                if (--outstanding == 0) request(BATCH);
            });
        }

        private void request(int n) {
            outstanding += n;
            if (fault == Fault.OVERLAPPING_REQUESTS) {
                // Half the batch from a thread of its own while the executor asks for the rest: two threads at once.
                Thread other = new Thread(() -> subscription.request(n / 2), "overlapping-request");
                other.setDaemon(true);
                other.start();
                subscription.request(n - n / 2);
                return;
            }
            subscription.request(n);
        }

        @Override public void onError(Throwable error) {
            Objects.requireNonNull(error, "onError(null)");
            if (terminated) return;
            terminated = true;
            executor.execute(() -> {
                if (observer != null) observer.onError(error);
                executor.shutdown();
            });
        }

        @Override public void onComplete() {
            if (fault == Fault.ON_COMPLETE_THROWS) throw new IllegalStateException("the mutant throws from onComplete");
            if (terminated) return;
            terminated = true;
            executor.execute(() -> {
                if (observer != null) observer.onComplete();
                executor.shutdown();
            });
        }
    }
}
