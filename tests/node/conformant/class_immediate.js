'use strict';
// Class-based: a publisher of a range, its subscription, and a subscriber that handles each element on a later
// turn of the event loop. Elements are delivered on setImmediate, a bounded batch per turn.

const PER_TURN = 16;

class Countdown {
  constructor(total, subscriber) {
    this.total = total;
    this.subscriber = subscriber;
    this.position = 0;
    this.demand = 0;
    this.active = true;
    this.pending = null; // the immediate that will deliver, when one is scheduled
  }

  request(n) {
    if (!this.active) return;
    if (typeof n === 'bigint') n = Number(n);
    if (typeof n !== 'number' || !(n > 0)) {
      this.fail(new RangeError(`Subscription.request: ${n} is not a positive number of elements`));
      return;
    }
    this.demand = Math.min(this.demand + n, Number.MAX_SAFE_INTEGER);
    this.schedule();
  }

  cancel() {
    this.stop();
  }

  start() {
    if (this.total === 0) this.schedule();
  }

  stop() {
    this.active = false;
    this.subscriber = null;
    if (this.pending !== null) {
      clearImmediate(this.pending);
      this.pending = null;
    }
  }

  fail(error) {
    const subscriber = this.subscriber;
    this.stop();
    setImmediate(() => subscriber.onError(error));
  }

  schedule() {
    if (this.pending === null && this.active) this.pending = setImmediate(() => this.deliver());
  }

  deliver() {
    this.pending = null;
    let sent = 0;
    while (this.active && this.demand > 0 && this.position < this.total && sent < PER_TURN) {
      this.demand -= 1;
      sent += 1;
      const element = this.position;
      this.position += 1;
      try {
        this.subscriber.onNext(element);
      } catch (err) {
        console.error('onNext threw: cancelling', err);
        this.stop();
      }
    }
    if (!this.active) return;
    if (this.position >= this.total) {
      const subscriber = this.subscriber;
      this.stop();
      subscriber.onComplete();
    } else if (this.demand > 0) {
      this.schedule();
    }
  }
}

class RangePublisher {
  constructor(total) {
    this.total = total;
  }

  subscribe(subscriber) {
    if (subscriber === null || subscriber === undefined) throw new TypeError('Publisher.subscribe: subscriber is null');
    const subscription = new Countdown(this.total, subscriber);
    subscriber.onSubscribe(subscription);
    subscription.start();
  }
}

class FailingPublisher {
  subscribe(subscriber) {
    if (subscriber == null) throw new TypeError('Publisher.subscribe: subscriber is null');
    let cancelled = false;
    subscriber.onSubscribe({ request() {}, cancel() { cancelled = true; } });
    setImmediate(() => { if (!cancelled) subscriber.onError(new Error('the source is unavailable')); });
  }
}

class LaterSubscriber {
  // Handles each element on a later immediate, and asks for more once it has handled half of what it asked.
  constructor(window = 16) {
    this.window = window;
    this.subscription = null;
    this.done = false;
    this.handled = 0;
  }

  onSubscribe(subscription) {
    if (subscription == null) throw new TypeError('onSubscribe: subscription is null');
    if (this.subscription !== null || this.done) {
      subscription.cancel();
      return;
    }
    this.subscription = subscription;
    subscription.request(this.window);
  }

  onNext(element) {
    if (element == null) throw new TypeError('onNext: element is null');
    setImmediate(() => {
      if (this.done) return;
      this.handled += 1;
      if (this.handled % (this.window / 2) === 0) this.subscription.request(this.window / 2);
    });
  }

  onError(error) {
    if (error == null) throw new TypeError('onError: error is null');
    this.done = true;
  }

  onComplete() {
    this.done = true;
  }
}

module.exports = {
  createPublisher: (n) => new RangePublisher(n),
  createFailedPublisher: () => new FailingPublisher(),
  createSubscriber: () => new LaterSubscriber(),
};
