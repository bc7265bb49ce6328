// A stand-in for reactive-streams-tck 1.0.4's SubscriberWhiteboxVerification: its constructor, its factory method,
// and its nested probe and puppet types with the TCK's public signatures; none of its tests.
package org.reactivestreams.tck;

import org.reactivestreams.Subscriber;
import org.reactivestreams.tck.TestEnvironment.Promise;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

public abstract class SubscriberWhiteboxVerification<T> extends WithHelperPublisher<T> {

  private final TestEnvironment env;

  protected SubscriberWhiteboxVerification(TestEnvironment env) {
    this.env = env;
  }

  public abstract Subscriber<T> createSubscriber(WhiteboxSubscriberProbe<T> probe);

  private ExecutorService publisherExecutor;
  public void startPublisherExecutorService() { publisherExecutor = Executors.newFixedThreadPool(4); }
  public void shutdownPublisherExecutorService() { if (publisherExecutor != null) publisherExecutor.shutdown(); }
  @Override public ExecutorService publisherExecutorService() { return publisherExecutor; }

  public static class BlackboxProbe<T> implements SubscriberProbe<T> {
    protected final TestEnvironment env;
    protected final Promise<Subscriber<? super T>> subscriber;
    protected final List<T> elements = new ArrayList<T>();
    protected final Promise<Throwable> error;

    public BlackboxProbe(TestEnvironment env, Promise<Subscriber<? super T>> subscriber) {
      this.env = env;
      this.subscriber = subscriber;
      error = new Promise<Throwable>(env);
    }

    @Override public void registerOnNext(T element) { elements.add(element); }

    @Override public void registerOnComplete() { }

    @Override public void registerOnError(Throwable cause) { error.complete(cause); }

    public Subscriber<? super T> sub() { return subscriber.value(); }
  }

  public static class WhiteboxSubscriberProbe<T> extends BlackboxProbe<T> implements SubscriberPuppeteer {
    protected Promise<SubscriberPuppet> puppet;

    public WhiteboxSubscriberProbe(TestEnvironment env, Promise<Subscriber<? super T>> subscriber) {
      super(env, subscriber);
      puppet = new Promise<SubscriberPuppet>(env);
    }

    @Override
    public void registerOnSubscribe(SubscriberPuppet p) {
      if (!puppet.isCompleted()) {
        puppet.complete(p);
      }
    }
  }

  public interface SubscriberPuppeteer {
    void registerOnSubscribe(SubscriberPuppet puppet);
  }

  public interface SubscriberProbe<T> {
    void registerOnNext(T element);

    void registerOnComplete();

    void registerOnError(Throwable cause);
  }

  public interface SubscriberPuppet {
    void triggerRequest(long elements);

    void signalCancel();
  }
}
