// Shows, without the kit, what SubmissionPublisher does where `rstck check 'jvm:JdkPublishers$Submission'` gives a
// verdict other than pass. Run: java ConfirmSubmission.java (a JDK 11 or later; no other jar). It prints one line
// per finding and exits 0 when each behaviour was seen as described, 1 otherwise.

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Flow;
import java.util.concurrent.SubmissionPublisher;
import java.util.concurrent.TimeUnit;

public class ConfirmSubmission {
    /** Records every signal with the thread it came on; `throwOnNext` makes onNext throw, as 2.13 forbids. */
    static final class Recorder implements Flow.Subscriber<Long> {
        final List<String> signals = Collections.synchronizedList(new ArrayList<>());
        final CountDownLatch terminated = new CountDownLatch(1);
        final CountDownLatch firstNext = new CountDownLatch(1);
        final CountDownLatch subscribed = new CountDownLatch(1);
        final boolean throwOnNext;
        volatile Flow.Subscription subscription;
        Recorder(boolean throwOnNext) { this.throwOnNext = throwOnNext; }

        public void onSubscribe(Flow.Subscription s) {
            subscription = s;
            signals.add("onSubscribe");
            subscribed.countDown();
        }
        Flow.Subscription subscription() throws InterruptedException {
            subscribed.await(10, TimeUnit.SECONDS);  // onSubscribe comes on the publisher's executor
            return subscription;
        }
        public void onNext(Long item) {
            signals.add("onNext(" + item + ") on " + Thread.currentThread().getName());
            firstNext.countDown();
            if (throwOnNext) throw new IllegalStateException("onNext throws");
        }
        public void onError(Throwable t) { signals.add("onError(" + t + ")"); terminated.countDown(); }
        public void onComplete() {
            signals.add("onComplete on " + Thread.currentThread().getName());
            terminated.countDown();
        }
    }

    public static void main(String[] args) throws Exception {
        ExecutorService pool = Executors.newCachedThreadPool(task -> {
            Thread thread = new Thread(task, "publisher-pool");
            thread.setDaemon(true);
            return thread;
        });
        boolean allSeen = true;

        // 2.13: onNext throws; the rule wants the subscription considered cancelled, so no further signal.
        SubmissionPublisher<Long> publisher = new SubmissionPublisher<>(pool, Flow.defaultBufferSize());
        Recorder throwing = new Recorder(true);
        publisher.subscribe(throwing);
        throwing.subscription().request(5);
        publisher.submit(0L);
        boolean signalledAfterThrow = throwing.terminated.await(10, TimeUnit.SECONDS);
        System.out.println("2.13 fail: after onNext threw, SubmissionPublisher signalled " + throwing.signals);
        allSeen &= signalledAfterThrow && throwing.signals.get(throwing.signals.size() - 1).startsWith("onError");

        // 3.10 and 3.11 (MAY, unsupported): request() returns on the caller's thread and onNext, onComplete come
        // on the executor's thread, never synchronously inside request().
        SubmissionPublisher<Long> oneElement = new SubmissionPublisher<>(pool, Flow.defaultBufferSize());
        Recorder recorder = new Recorder(false);
        oneElement.subscribe(recorder);
        oneElement.submit(0L);
        oneElement.close();
        String caller = Thread.currentThread().getName();
        recorder.subscription().request(2);
        recorder.terminated.await(10, TimeUnit.SECONDS);
        System.out.println("3.10, 3.11 unsupported: request(2) called on " + caller + "; then " + recorder.signals);
        allSeen &= recorder.signals.size() == 3 && !recorder.signals.get(1).endsWith(" on " + caller)
                && !recorder.signals.get(2).endsWith(" on " + caller);

        // 3.14 (MAY, unsupported): cancelling one subscriber does not shut the publisher down.
        SubmissionPublisher<Long> shared = new SubmissionPublisher<>(pool, Flow.defaultBufferSize());
        Recorder cancelling = new Recorder(false), next = new Recorder(false);
        shared.subscribe(cancelling);
        cancelling.subscription().cancel();
        shared.subscribe(next);
        next.subscription().request(1);
        shared.submit(7L);
        next.firstNext.await(10, TimeUnit.SECONDS);
        System.out.println("3.14 unsupported: after a cancel, closed=" + shared.isClosed()
                + "; a new subscriber got " + next.signals);
        allSeen &= !shared.isClosed() && next.signals.size() == 2;

        pool.shutdownNow();
        System.exit(allSeen ? 0 : 1);
    }
}
