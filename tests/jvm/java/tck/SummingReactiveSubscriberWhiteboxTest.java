// The same subscriber's white-box test class in the TCK's org.reactivestreams form (SubscriberWhiteboxVerification,
// createSubscriber(probe)), its Flow subscriber adapted with FlowAdapters as such a test class does.

import java.util.concurrent.Flow;
import org.reactivestreams.FlowAdapters;
import org.reactivestreams.Subscriber;
import org.reactivestreams.tck.SubscriberWhiteboxVerification;
import org.reactivestreams.tck.TestEnvironment;

public class SummingReactiveSubscriberWhiteboxTest extends SubscriberWhiteboxVerification<Integer> {

    public SummingReactiveSubscriberWhiteboxTest() {
        super(new TestEnvironment());
    }

    @Override
    public Subscriber<Integer> createSubscriber(final WhiteboxSubscriberProbe<Integer> probe) {
        return FlowAdapters.toSubscriber(new SummingSubscriber() {
            @Override
            public void onSubscribe(final Flow.Subscription s) {
                super.onSubscribe(s);
                probe.registerOnSubscribe(new SubscriberPuppet() {
                    @Override
                    public void triggerRequest(long elements) {
                        s.request(elements);
                    }

                    @Override
                    public void signalCancel() {
                        s.cancel();
                    }
                });
            }

            @Override
            public void onNext(Integer element) {
                super.onNext(element);
                probe.registerOnNext(element);
            }

            @Override
            public void onError(Throwable cause) {
                super.onError(cause);
                probe.registerOnError(cause);
            }

            @Override
            public void onComplete() {
                super.onComplete();
                probe.registerOnComplete();
            }
        });
    }

    @Override
    public Integer createElement(int element) {
        return element;
    }
}
