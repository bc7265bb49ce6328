// A subscriber's white-box test class as a user of reactive-streams-tck 1.0.4 writes one (after the TCK's own
// SyncTriggeredDemandSubscriberWhiteboxTest): `rstck check jvm:SummingSubscriberWhiteboxTest` runs it as it is.

import java.util.concurrent.Flow;
import org.reactivestreams.tck.TestEnvironment;
import org.reactivestreams.tck.flow.FlowSubscriberWhiteboxVerification;

public class SummingSubscriberWhiteboxTest extends FlowSubscriberWhiteboxVerification<Integer> {

    public SummingSubscriberWhiteboxTest() {
        super(new TestEnvironment());
    }

    @Override
    public Flow.Subscriber<Integer> createFlowSubscriber(final WhiteboxSubscriberProbe<Integer> probe) {
        return new SummingSubscriber() {
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
        };
    }

    @Override
    public Integer createElement(int element) {
        return element;
    }
}
