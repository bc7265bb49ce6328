'use strict';
// A conformant subscriber that does its work on later turns: it requests, and cancels a second
// subscription, from setImmediate callbacks. Settling must wait for those, and the kit must take calls
// that arrive outside any call of its own.
class AsyncSubscriber {
  constructor() {
    this._subscription = null;
    this._used = false;
    this._done = false;
  }

  onSubscribe(subscription) {
    if (subscription === null || subscription === undefined) throw new TypeError('2.13: onSubscribe(null)');
    if (this._used) {
      setImmediate(() => subscription.cancel()); // 2.5
      return;
    }
    this._used = true;
    this._subscription = subscription;
    setImmediate(() => this._ask(4));
  }

  onNext(element) {
    if (element === null || element === undefined) throw new TypeError('2.13: onNext(null)');
    if (this._done) return;
    this._received = (this._received || 0) + 1;
    if (this._received % 4 === 0) setImmediate(() => this._ask(4));
  }

  onError(error) {
    if (error === null || error === undefined) throw new TypeError('2.13: onError(null)');
    this._done = true; // 2.4: nothing is called on the subscription from now on
  }

  onComplete() {
    this._done = true;
  }

  _ask(n) {
    if (!this._done && this._subscription !== null) this._subscription.request(n);
  }
}

module.exports = { createSubscriber: () => new AsyncSubscriber() };
