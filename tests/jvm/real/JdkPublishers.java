// The JDK's own Flow publisher, java.util.concurrent.SubmissionPublisher, made the way its users make one:
// `rstck check 'jvm:JdkPublishers$Submission'`.

import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Flow;
import java.util.concurrent.SubmissionPublisher;

public final class JdkPublishers {
    // Daemon threads: a check that leaves a submitter blocked must not keep the kit's JVM alive.
    static final ExecutorService POOL = Executors.newCachedThreadPool(task -> {
        Thread thread = new Thread(task, "submission-publisher");
        thread.setDaemon(true);
        return thread;
    });

    /**
     * A cold publisher of n elements: each subscriber gets a SubmissionPublisher of its own, and a task on the
     * pool submits 0..n-1 to it, then closes it. A SubmissionPublisher is hot (it delivers what is submitted to
     * those subscribed at the time), so one per subscriber is how every subscriber gets all n.
     */
    public static final class Submission {
        public Flow.Publisher<Long> createFlowPublisher(long n) {
            return subscriber -> {
                SubmissionPublisher<Long> publisher = new SubmissionPublisher<>(POOL, Flow.defaultBufferSize());
                publisher.subscribe(subscriber);  // throws NullPointerException for null (1.9)
                POOL.execute(() -> {
                    // submit blocks while the subscriber's buffer is full, so the items follow its demand;
                    // once it cancelled, submit returns at once (no subscribers).
                    for (long i = 0; i < n && !publisher.isClosed(); i++) publisher.submit(i);
                    publisher.close();
                });
            };
        }

        public Flow.Publisher<Long> createFailedFlowPublisher() {
            SubmissionPublisher<Long> publisher = new SubmissionPublisher<>(POOL, Flow.defaultBufferSize());
            publisher.closeExceptionally(new IllegalStateException("closed exceptionally"));
            return publisher;
        }

        public long maxElementsFromPublisher() { return 1024; }
    }
}
