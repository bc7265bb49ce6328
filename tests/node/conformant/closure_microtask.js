'use strict';
// Publishers and a subscriber written with closures, no classes: each subscription is an object literal whose
// methods share the subscribe call's variables. Elements and terminal signals come on microtasks
// (Promise.resolve().then), never inside request().

const UNBOUNDED = Number.MAX_SAFE_INTEGER;

function later(work) {
  Promise.resolve().then(work);
}

function createPublisher(count) {
  return {
    subscribe(subscriber) {
      if (subscriber === null || subscriber === undefined) throw new TypeError('subscribe: a subscriber is required');
      let sent = 0;
      let demand = 0;
      let finished = false;
      let queued = false;

      const pump = () => {
        queued = false;
        while (!finished && demand > 0 && sent < count) {
          demand -= 1;
          const value = sent;
          sent += 1;
          try {
            subscriber.onNext(value);
          } catch (err) {
            finished = true;
            console.error('onNext threw, the subscription is cancelled', err);
          }
        }
        if (!finished && sent >= count) {
          finished = true;
          subscriber.onComplete();
        }
      };
      const wake = () => {
        if (!queued && !finished) {
          queued = true;
          later(pump);
        }
      };

      subscriber.onSubscribe({
        request(n) {
          if (finished) return;
          if (!(n > 0)) {
            finished = true;
            later(() => subscriber.onError(new RangeError(`request(${String(n)}) is illegal: n must be positive`)));
            return;
          }
          demand = demand + Number(n) >= UNBOUNDED ? Infinity : demand + Number(n);
          wake();
        },
        cancel() {
          finished = true;
        },
      });
      if (count === 0) wake();
    },
  };
}

function createFailedPublisher() {
  return {
    subscribe(subscriber) {
      if (subscriber == null) throw new TypeError('subscribe: a subscriber is required');
      let cancelled = false;
      subscriber.onSubscribe({ request() {}, cancel() { cancelled = true; } });
      later(() => {
        if (!cancelled) subscriber.onError(new Error('this publisher always fails'));
      });
    },
  };
}

function createSubscriber() {
  // Asks for a batch of eight and for the next batch once half of it has arrived; cancels any second
  // subscription.
  const BATCH = 8;
  let subscription = null;
  let over = false;
  let outstanding = 0;
  return {
    onSubscribe(s) {
      if (s == null) throw new TypeError('onSubscribe: a subscription is required');
      if (subscription !== null || over) {
        s.cancel();
        return;
      }
      subscription = s;
      outstanding = BATCH;
      s.request(BATCH);
    },
    onNext(value) {
      if (value == null) throw new TypeError('onNext: an element is required');
      outstanding -= 1;
      if (!over && outstanding <= BATCH / 2) {
        outstanding += BATCH;
        subscription.request(BATCH);
      }
    },
    onError(err) {
      if (err == null) throw new TypeError('onError: an error is required');
      over = true;
      subscription = null;
    },
    onComplete() {
      over = true;
      subscription = null;
    },
  };
}

module.exports = { createPublisher, createFailedPublisher, createSubscriber };
