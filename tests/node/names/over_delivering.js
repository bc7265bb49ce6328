'use strict';
// 1.1 broken on purpose, in plain classes of its own: each request delivers one element more than was asked for.
class OverDeliveringSubscription {
  constructor(subscriber, count) {
    this.subscriber = subscriber;
    this.count = count;
    this.next = 0;
    this.done = false;
  }

  request(n) {
    for (let left = n + 1; left > 0 && this.next < this.count && !this.done; left -= 1) {
      this.subscriber.onNext(this.next);
      this.next += 1;
    }
    if (this.next >= this.count && !this.done) {
      this.done = true;
      this.subscriber.onComplete();
    }
  }

  cancel() {
    this.done = true;
  }
}

class CountingPublisher {
  constructor(count) {
    this.count = count;
  }

  subscribe(subscriber) {
    subscriber.onSubscribe(new OverDeliveringSubscription(subscriber, this.count));
  }
}

module.exports = { createPublisher: (n) => new CountingPublisher(n) };
