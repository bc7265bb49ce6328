// The JVM TCK's white-box probe, for a class written against reactive-streams-tck's SubscriberWhiteboxVerification
// (createSubscriber(WhiteboxSubscriberProbe), or createFlowSubscriber(WhiteboxSubscriberProbe) of the Flow variant):
// what its subscriber registers goes to the kit's white-box observer, exactly as rstck's own white-box form tells it
// (docs/jvm.md). WhiteboxSubscriberProbe is a class of the TCK's, which no py4j proxy can stand in for, so this is
// compiled at first use against the TCK on the user's classpath (rstck/protocols/jvm/proxies.py).

import java.util.concurrent.Flow;
import org.reactivestreams.Subscriber;
import org.reactivestreams.tck.SubscriberWhiteboxVerification;
import org.reactivestreams.tck.TestEnvironment;

public final class RstckTckWhiteboxProbe<T> extends SubscriberWhiteboxVerification.WhiteboxSubscriberProbe<T> {
    private final Flow.Subscriber<Object> observer;

    public RstckTckWhiteboxProbe(Flow.Subscriber<Object> observer) {
        this(observer, new TestEnvironment());
    }

    private RstckTckWhiteboxProbe(Flow.Subscriber<Object> observer, TestEnvironment env) {
        super(env, new TestEnvironment.Promise<Subscriber<? super T>>(env));
        this.observer = observer;
    }

    /**
     * The puppet goes where rstck's form hands the observer the subscription: a subscription whose request and
     * cancel are the puppet's triggerRequest and signalCancel.
     */
    @Override
    public void registerOnSubscribe(final SubscriberWhiteboxVerification.SubscriberPuppet puppet) {
        observer.onSubscribe(new Flow.Subscription() {
            @Override public void request(long n) { puppet.triggerRequest(n); }
            @Override public void cancel() { puppet.signalCancel(); }
        });
    }

    @Override public void registerOnNext(T element) { observer.onNext(element); }

    @Override public void registerOnComplete() { observer.onComplete(); }

    @Override public void registerOnError(Throwable cause) { observer.onError(cause); }

    @Override public String toString() { return "rstck " + observer; }
}
