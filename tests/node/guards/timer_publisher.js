'use strict';
// A conformant asynchronous publisher: it delivers on timers (setTimeout 1 ms), a few elements per tick,
// through a promise chain (microtasks). Settling must wait for its timers, and see it go idle after.
const UNBOUNDED = Number.MAX_SAFE_INTEGER;

function illegal(n) {
  return typeof n === 'number' && n > 0 ? null : new RangeError(`3.9: non-positive request signals are illegal, got ${n}`);
}

function add(demand, n) {
  return demand + n >= UNBOUNDED ? Infinity : demand + n;
}

const BATCH = 3;

class TimerSubscription {
  constructor(subscriber, count) {
    this._subscriber = subscriber;
    this._count = count;
    this._next = 0;
    this._demand = 0;
    this._error = null;
    this._scheduled = false;
  }

  request(n) {
    if (this._subscriber === null || this._error !== null) return;
    const error = illegal(n);
    if (error !== null) this._error = error;
    else this._demand = add(this._demand, n);
    this._schedule();
  }

  cancel() {
    this._subscriber = null;
  }

  _schedule() {
    if (this._scheduled || this._subscriber === null) return;
    this._scheduled = true;
    setTimeout(() => Promise.resolve().then(() => {
      this._scheduled = false;
      this._run();
    }), 1);
  }

  _run() {
    for (let k = 0; k < BATCH; k += 1) {
      const subscriber = this._subscriber;
      if (subscriber === null) return;
      if (this._error !== null) return this._end('onError', this._error);
      if (this._next >= this._count) return this._end('onComplete');
      if (this._demand < 1) return undefined;
      this._demand -= 1;
      this._next += 1;
      this._call(subscriber, 'onNext', this._next - 1);
    }
    this._schedule();
    return undefined;
  }

  _end(method, ...args) {
    const subscriber = this._subscriber;
    this._subscriber = null;
    this._call(subscriber, method, ...args);
  }

  _call(subscriber, method, ...args) {
    try {
      subscriber[method](...args);
    } catch (err) {
      this._subscriber = null;
      console.error(`2.13: ${method} threw; the subscription is cancelled`, err);
    }
  }
}

class TimerPublisher {
  constructor(count) {
    this._count = count;
  }

  subscribe(subscriber) {
    if (subscriber === null || subscriber === undefined) throw new TypeError('1.9: subscribe(null)');
    const subscription = new TimerSubscription(subscriber, this._count);
    setTimeout(() => {
      subscription._call(subscriber, 'onSubscribe', subscription);
      subscription._schedule(); // an empty stream ends without demand
    }, 1);
  }
}

module.exports = { createPublisher: (n) => new TimerPublisher(n) };
