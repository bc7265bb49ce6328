// A stand-in for reactive-streams-tck 1.0.4's TestEnvironment (the TCK's jar is not installable here): the public
// shapes a TCK test class needs to compile and be constructed, with the TCK's signatures; no test logic.
package org.reactivestreams.tck;

import java.util.concurrent.atomic.AtomicReference;

public class TestEnvironment {
  public static final int TEST_BUFFER_SIZE = 16;

  private final long defaultTimeoutMillis;
  private final long defaultNoSignalsTimeoutMillis;

  public TestEnvironment(long defaultTimeoutMillis, long defaultNoSignalsTimeoutMillis) {
    this.defaultTimeoutMillis = defaultTimeoutMillis;
    this.defaultNoSignalsTimeoutMillis = defaultNoSignalsTimeoutMillis;
  }

  public TestEnvironment(long defaultTimeoutMillis) {
    this(defaultTimeoutMillis, defaultTimeoutMillis);
  }

  public TestEnvironment() {
    this(100, 100);
  }

  public long defaultTimeoutMillis() { return defaultTimeoutMillis; }

  public long defaultNoSignalsTimeoutMillis() { return defaultNoSignalsTimeoutMillis; }

  public void flop(String msg) { throw new AssertionError(msg); }

  // simple promise for *one* value, which cannot be reset
  public static class Promise<T> {
    private final TestEnvironment env;
    private final AtomicReference<T> value = new AtomicReference<T>();

    public static <T> Promise<T> completed(TestEnvironment env, T value) {
      Promise<T> promise = new Promise<T>(env);
      promise.complete(value);
      return promise;
    }

    public Promise(TestEnvironment env) {
      this.env = env;
    }

    public T value() { return value.get(); }

    public boolean isCompleted() { return value.get() != null; }

    public void complete(T value) {
      if (!this.value.compareAndSet(null, value)) env.flop("Cannot complete a promise more than once!");
    }
  }
}
