// org.reactivestreams.FlowAdapters (Debian's libreactive-streams-java) around the project's reference Range
// publisher (tests/jvm/java/Publishers.java), which passes every check on its own:
// `rstck check 'jvm:AdaptedPublishers$RoundTrip'` and `'jvm:AdaptedPublishers$ToReactive'`.

import java.util.concurrent.Flow;
import org.reactivestreams.FlowAdapters;
import org.reactivestreams.Publisher;

public final class AdaptedPublishers {
    static final Publishers.Range RANGE = new Publishers.Range();

    /**
     * Flow -> Reactive Streams -> Flow: both adapters, their subscriber and subscription adapters included.
     * The middle publisher is a plain lambda: FlowAdapters unwraps its own adapters, so toFlowPublisher(
     * toPublisher(x)) alone would hand back x itself.
     */
    public static final class RoundTrip {
        static Flow.Publisher<Long> roundTrip(Flow.Publisher<Long> flow) {
            Publisher<Long> adapted = FlowAdapters.toPublisher(flow);
            Publisher<Long> opaque = subscriber -> adapted.subscribe(subscriber);
            return FlowAdapters.toFlowPublisher(opaque);
        }
        public Flow.Publisher<Long> createFlowPublisher(long n) { return roundTrip(RANGE.createFlowPublisher(n)); }
        public Flow.Publisher<Long> createFailedFlowPublisher() { return roundTrip(RANGE.createFailedFlowPublisher()); }
        public long maxElementsFromPublisher() { return Long.MAX_VALUE - 1; }
    }

    /** Flow -> Reactive Streams: an org.reactivestreams.Publisher, driven through that interface family. */
    public static final class ToReactive {
        public Publisher<Long> createPublisher(long n) { return FlowAdapters.toPublisher(RANGE.createFlowPublisher(n)); }
        public Publisher<Long> createFailedPublisher() { return FlowAdapters.toPublisher(RANGE.createFailedFlowPublisher()); }
        public long maxElementsFromPublisher() { return Long.MAX_VALUE - 1; }
    }
}
