// A user's own Flow subscriber, which the TCK-style test classes beside it check: it sums the Integers it receives,
// synchronously, asking for BATCH at a time and for the next batch once one has arrived.

import java.util.Objects;
import java.util.concurrent.Flow;

public class SummingSubscriber implements Flow.Subscriber<Integer> {
    static final int BATCH = 4;

    private Flow.Subscription subscription;
    private boolean done;
    private long outstanding;
    private long sum;

    public long sum() { return sum; }

    @Override public void onSubscribe(Flow.Subscription s) {
        Objects.requireNonNull(s, "onSubscribe(null)");  // 2.13
        if (subscription != null) {  // 2.5: already subscribed
            s.cancel();
            return;
        }
        subscription = s;
        outstanding = BATCH;
        s.request(BATCH);
    }

    @Override public void onNext(Integer element) {
        Objects.requireNonNull(element, "onNext(null)");
        if (done) return;
        sum += element;
        if (--outstanding == 0) {
            outstanding = BATCH;
            subscription.request(BATCH);
        }
    }

    @Override public void onError(Throwable error) {
        Objects.requireNonNull(error, "onError(null)");
        done = true;
    }

    @Override public void onComplete() { done = true; }
}
