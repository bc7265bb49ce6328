// A mutant of SummingSubscriberWhiteboxTest: its subscriber tells the probe it processed each element twice (2.11).
// Its createFlowSubscriber stays protected, as the TCK declares it, so the kit reaches it through the TCK's
// createSubscriber(probe), in the org.reactivestreams form.

import java.util.concurrent.Flow;
import org.reactivestreams.tck.TestEnvironment;
import org.reactivestreams.tck.flow.FlowSubscriberWhiteboxVerification;

public class ProcessedTwiceWhiteboxTest extends FlowSubscriberWhiteboxVerification<Integer> {

    public ProcessedTwiceWhiteboxTest() {
        super(new TestEnvironment());
    }

    @Override
    protected Flow.Subscriber<Integer> createFlowSubscriber(final WhiteboxSubscriberProbe<Integer> probe) {
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
                probe.registerOnNext(element);  // the fault
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
