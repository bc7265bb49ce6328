// A stand-in for reactive-streams-tck-flow 1.0.4's FlowSubscriberWhiteboxVerification: createSubscriber adapts the
// Flow subscriber with FlowAdapters, as the TCK's does; createFlowSubscriber is protected there too.
package org.reactivestreams.tck.flow;

import org.reactivestreams.FlowAdapters;
import org.reactivestreams.Subscriber;
import org.reactivestreams.tck.SubscriberWhiteboxVerification;
import org.reactivestreams.tck.TestEnvironment;

import java.util.concurrent.Flow;

public abstract class FlowSubscriberWhiteboxVerification<T> extends SubscriberWhiteboxVerification<T> {

  protected FlowSubscriberWhiteboxVerification(TestEnvironment env) {
    super(env);
  }

  @Override
  final public Subscriber<T> createSubscriber(WhiteboxSubscriberProbe<T> probe) {
    return FlowAdapters.toSubscriber(createFlowSubscriber(probe));
  }

  protected abstract Flow.Subscriber<T> createFlowSubscriber(WhiteboxSubscriberProbe<T> probe);
}
