'use strict';
// Delivers each request's elements 30 ms later, on a timer.
class Late {
  constructor(subscriber, n) {
    this.subscriber = subscriber;
    this.left = n;
    this.demand = 0;
  }

  request(k) {
    if (!(k > 0)) {
      const s = this.subscriber;
      this.subscriber = null;
      if (s) s.onError(new RangeError('3.9: non-positive request signals are illegal'));
      return;
    }
    this.demand += k;
    setTimeout(() => this.flush(), 30);
  }

  cancel() {
    this.subscriber = null;
  }

  flush() {
    while (this.subscriber && this.demand > 0 && this.left > 0) {
      this.demand -= 1;
      this.left -= 1;
      this.subscriber.onNext(this.left);
    }
    if (this.subscriber && this.left === 0) {
      const s = this.subscriber;
      this.subscriber = null;
      s.onComplete();
    }
  }
}

module.exports = {
  createPublisher: (n) => ({
    subscribe(subscriber) {
      if (subscriber === null || subscriber === undefined) throw new TypeError('1.9: subscribe(null)');
      subscriber.onSubscribe(new Late(subscriber, n));
    },
  }),
};
