// A stand-in for reactive-streams-tck 1.0.4's WithHelperPublisher: the abstract methods a test class implements.
package org.reactivestreams.tck;

import java.util.concurrent.ExecutorService;

public abstract class WithHelperPublisher<T> {

  public abstract ExecutorService publisherExecutorService();

  public abstract T createElement(int element);
}
