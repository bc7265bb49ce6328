'use strict';
// Reference implementations of Reactive Streams for JavaScript, shipped with rstck: a publisher of a
// range of numbers, a failed publisher, a subscriber and an identity processor, in one CommonJS module.
//
//   rstck check node:rstck/reference/js/reactive_streams.js
//
// The factories the Node adapter calls (docs/node.md): createPublisher(n), createFailedPublisher(),
// createSubscriber(), createWhiteboxSubscriber(observer), createProcessor().
//
// The non-obvious part is re-entrancy. JavaScript has one thread, so nothing overlaps, but a call can
// nest: a subscriber that requests from inside onNext re-enters the publisher. Each object therefore
// posts its outgoing calls to a `Serial`, which runs them one after another in whichever frame is
// already running them: calls never nest (3.3: depth one), demand added from inside a signal is served
// by the loop already running, and a call still queued when the stream ends is dropped (2.3, 2.4).

// 3.17: a demand at or above this is effectively unbounded. A Number is exact only up to 2**53-1, and
// 2**63-1 itself reaches JavaScript as 2**63 (docs/node.md): beyond this, counting would be a guess.
const UNBOUNDED_FROM = Number.MAX_SAFE_INTEGER;

function illegalRequest(n) {
  // 3.9: a RangeError whose message says why. A BigInt demand is accepted like a Number.
  const positive = typeof n === 'bigint' ? n > 0n : typeof n === 'number' && n > 0;
  return positive ? null : new RangeError(`3.9: non-positive request signals are illegal, got ${String(n)}`);
}

function addDemand(demand, n) {
  const added = typeof n === 'bigint' ? (n >= BigInt(UNBOUNDED_FROM) ? Infinity : Number(n)) : n;
  const sum = demand + added;
  return sum >= UNBOUNDED_FROM ? Infinity : sum;
}

function requireArgument(value, method, what) {
  // 2.13: a null argument throws a TypeError to the caller.
  if (value === null || value === undefined) {
    throw new TypeError(`2.13: ${method}(${value}) is illegal: ${what} is required`);
  }
}

function report(what, err) {
  // 2.13: a subscriber broke the contract; the caller makes it known, here on the console.
  console.error(`2.13: ${what} threw; its subscription is cancelled:`, err);
}

class Serial {
  // Runs posted calls in order, one at a time, in the frame already running them (see the top).
  constructor() {
    this._queue = [];
    this._running = false;
  }

  post(call) {
    this._queue.push(call);
    if (this._running) return;
    this._running = true;
    try {
      while (this._queue.length) this._queue.shift()();
    } finally {
      this._running = false;
      this._queue.length = 0;
    }
  }
}

// -- the publishers --------------------------------------------------------------------------------

class RangeSubscription {
  // One subscriber's stream: demand, cancel and the terminal state (1.1, 1.5-1.7, 1.9, 3.5-3.9, 3.13-3.17).
  constructor(subscriber, count, failure) {
    this._subscriber = subscriber; // null once cancelled or terminated: 1.6, 3.6, 3.7, 3.13
    this._count = count;
    this._failure = failure; // a failed publisher's error, signalled with or without demand (1.4)
    this._next = 0;
    this._demand = 0;
    this._error = null; // a 3.9 error waiting to be signalled
    this._started = false;
    this._serial = new Serial();
  }

  request(n) {
    if (this._subscriber === null || this._error !== null) return; // 3.6
    const error = illegalRequest(n);
    if (error !== null) this._error = error;
    else this._demand = addDemand(this._demand, n);
    this._serial.post(() => this._drain());
  }

  cancel() {
    this._subscriber = null; // 3.5, 3.7, 3.12, 3.13: the subscriber is dropped at once
  }

  start() {
    this._serial.post(() => this._drain());
  }

  _drain() {
    for (;;) {
      const subscriber = this._subscriber;
      if (subscriber === null) return;
      if (!this._started) {
        this._started = true; // 1.9: onSubscribe before anything else
        this._signal(subscriber, 'onSubscribe', this);
      } else if (this._error !== null) {
        return this._terminate('onError', this._error); // 3.9
      } else if (this._failure !== null) {
        return this._terminate('onError', this._failure); // 1.4
      } else if (this._next >= this._count) {
        return this._terminate('onComplete'); // 1.5, with or without demand (2.9)
      } else if (this._demand >= 1) {
        this._demand -= 1;
        const element = this._next;
        this._next += 1;
        this._signal(subscriber, 'onNext', element);
      } else {
        return undefined; // 1.1: no demand, no element
      }
    }
  }

  _terminate(method, error) {
    const subscriber = this._subscriber;
    this._subscriber = null; // 1.6, 1.7
    if (method === 'onError') this._signal(subscriber, method, error);
    else this._signal(subscriber, method);
  }

  _signal(subscriber, method, ...args) {
    try {
      subscriber[method](...args);
    } catch (err) {
      this._subscriber = null; // 2.13: the subscription counts as cancelled
      report(`${method}`, err);
    }
  }
}

class RangePublisher {
  // A publisher of the numbers 0..count-1, unicast: each subscriber gets the whole range (1.10, 1.11).
  constructor(count, failure = null) {
    this._count = count;
    this._failure = failure;
    this._live = []; // subscriptions with a subscriber, pruned as they end (3.13 keeps none alive)
  }

  subscribe(subscriber) {
    if (subscriber === null || subscriber === undefined) {
      throw new TypeError('1.9: subscribe(null) is illegal'); // 1.9
    }
    this._live = this._live.filter((s) => s._subscriber !== null);
    if (this._live.some((s) => s._subscriber === subscriber)) {
      console.warn('2.12: the subscriber is already subscribed; the second subscribe is ignored');
      return;
    }
    const failure = typeof this._failure === 'function' ? this._failure() : this._failure;
    const subscription = this.newSubscription(subscriber, this._count, failure);
    this._live.push(subscription);
    subscription.start();
  }

  newSubscription(subscriber, count, failure) {
    return new RangeSubscription(subscriber, count, failure);
  }
}

// -- the subscriber ----------------------------------------------------------------------------------

class BufferedSubscriber {
  // Requests `bufferSize` elements at first, and tops the demand up once half of it is used (2.1: in
  // batches). It is single-use: a second subscription, or any after the first ended, is cancelled (2.5).
  // An `observer` (the kit's white-box hook) is told of each signal once it has been processed (2.11).
  constructor(bufferSize = 16, observer = null) {
    this._bufferSize = bufferSize;
    this._observer = observer;
    this._subscription = null;
    this._used = false;
    this._done = false;
    this._outstanding = 0;
    this.received = 0;
    this._calls = new Serial();
  }

  onSubscribe(subscription) {
    requireArgument(subscription, 'onSubscribe', 'a subscription');
    if (this._used) {
      subscription.cancel(); // 2.5
      return;
    }
    this._used = true;
    this._subscription = subscription;
    this._notify('onSubscribeProcessed');
    this._request(this._bufferSize);
  }

  onNext(element) {
    requireArgument(element, 'onNext', 'an element');
    if (this._done || this._subscription === null) return; // 2.8: after cancel or the end, dropped
    this._outstanding -= 1;
    this.received += 1;
    this._notify('onNextProcessed', element);
    if (this._outstanding <= this._bufferSize / 2) this._request(this._bufferSize - this._outstanding);
  }

  onError(error) {
    requireArgument(error, 'onError', 'an error');
    this._end('onErrorProcessed', error);
  }

  onComplete() {
    this._end('onCompleteProcessed');
  }

  _end(hook, ...args) {
    if (this._done) return;
    this._done = true;
    this._subscription = null; // 2.4: the subscription counts as cancelled; 2.3: nothing is called on it
    this._notify(hook, ...args);
  }

  _request(n) {
    this._outstanding += n;
    // 2.1: the call goes last; posted, so that a publisher that signals from inside request does not nest.
    this._calls.post(() => {
      const subscription = this._subscription;
      if (subscription !== null && !this._done) subscription.request(n);
    });
  }

  _notify(hook, ...args) {
    if (this._observer !== null) this._observer[hook](...args);
  }
}

// -- the processor -------------------------------------------------------------------------------------

class IdentityProcessor {
  // Subscriber upstream, publisher downstream, passing elements unchanged (4.1). It never buffers: it
  // requests upstream exactly what downstream requests. One downstream subscriber: a second gets
  // onSubscribe then onError (1.9, 1.11). An upstream onError is passed on at once (4.2); a downstream
  // cancel cancels upstream (4.2, RECOMMENDED). Terminal signals that come before a downstream
  // subscriber are kept for it.
  constructor() {
    this._upstream = null;
    this._upstreamState = 'new'; // new -> active -> done
    this._upstreamEnded = false;
    this._unforwarded = 0; // downstream demand that came before the upstream subscription
    this._downstream = null;
    this._downstreamState = 'new'; // new -> active -> done
    this._downstreamCancelled = false;
    this._demand = 0;
    this._terminal = null; // [method, args] kept for a late subscriber
    this._upCalls = new Serial();
    this._downSignals = new Serial();
  }

  // Publisher (downstream)

  subscribe(subscriber) {
    if (subscriber === null || subscriber === undefined) throw new TypeError('1.9: subscribe(null) is illegal');
    if (this._downstreamState !== 'new') {
      new RangePublisher(0, () => new Error('the processor takes a single subscriber, and had one (1.11)'))
        .subscribe(subscriber);
      return;
    }
    this._downstreamState = 'active';
    this._downstream = subscriber;
    this._signal('onSubscribe', new ProcessorSubscription(this));
    if (this._terminal !== null) {
      const [method, args] = this._terminal;
      this._terminal = null;
      this._finishDownstream(method, ...args);
    }
  }

  // Subscriber (upstream)

  onSubscribe(subscription) {
    requireArgument(subscription, 'onSubscribe', 'a subscription');
    if (this._upstreamState !== 'new') {
      this._upCalls.post(() => subscription.cancel()); // 2.5, or the downstream is gone already
      return;
    }
    this._upstreamState = 'active';
    this._upstream = subscription;
    if (this._unforwarded > 0) {
      const n = this._unforwarded;
      this._unforwarded = 0;
      this._callUpstream('request', n);
    }
  }

  onNext(element) {
    requireArgument(element, 'onNext', 'an element');
    if (this._downstream === null) return; // not subscribed yet, or gone: dropped (2.8)
    if (this._demand < 1) {
      this._fail(new Error('1.1: the upstream signalled onNext beyond the demand given'));
      return;
    }
    this._demand -= 1;
    this._signal('onNext', element);
  }

  onError(error) {
    requireArgument(error, 'onError', 'an error');
    this._upstreamTerminal('onError', error);
  }

  onComplete() {
    this._upstreamTerminal('onComplete');
  }

  // The downstream subscription

  _request(n) {
    if (this._downstreamState !== 'active') return; // 3.6
    const error = illegalRequest(n);
    if (error !== null) {
      this._fail(error); // 3.9
      return;
    }
    this._demand = addDemand(this._demand, n);
    if (this._upstreamState === 'active') this._callUpstream('request', n);
    else if (this._upstreamState === 'new') this._unforwarded = addDemand(this._unforwarded, n);
  }

  _cancel() {
    if (this._downstreamState !== 'active') return; // 3.7
    this._downstreamState = 'done';
    this._downstream = null; // 3.13
    this._downstreamCancelled = true;
    this._cancelUpstream();
  }

  // Internals

  _upstreamTerminal(method, ...args) {
    if (this._upstreamEnded) return; // a duplicate terminal: the upstream broke 1.7
    this._upstreamEnded = true;
    if (this._upstreamState !== 'done') {
      this._upstreamState = 'done';
      this._upstream = null;
      this._finishDownstream(method, ...args);
    }
  }

  _fail(error) {
    this._cancelUpstream();
    this._finishDownstream('onError', error);
  }

  _cancelUpstream() {
    if (this._upstreamState === 'active') this._callUpstream('cancel');
    this._upstreamState = 'done';
    this._upstream = null;
  }

  _finishDownstream(method, ...args) {
    if (this._downstreamState === 'active') {
      this._signal(method, ...args);
      this._downstreamState = 'done';
      this._downstream = null;
    } else if (this._downstreamState === 'new') {
      this._terminal = [method, args];
    }
  }

  _callUpstream(method, ...args) {
    const upstream = this._upstream;
    this._upCalls.post(() => {
      if (!this._upstreamEnded) upstream[method](...args); // queued before the end: dropped (2.3, 2.4)
    });
  }

  _signal(method, ...args) {
    const subscriber = this._downstream;
    this._downSignals.post(() => {
      if (method === 'onNext' && this._downstreamCancelled) return; // queued before a cancel: not wanted
      try {
        subscriber[method](...args);
      } catch (err) {
        report(method, err);
        this._cancel();
      }
    });
  }
}

class ProcessorSubscription {
  // What the processor hands its downstream subscriber.
  constructor(processor) {
    this._processor = processor;
  }

  request(n) {
    this._processor._request(n);
  }

  cancel() {
    this._processor._cancel();
  }
}

module.exports = {
  Serial,
  RangePublisher,
  RangeSubscription,
  BufferedSubscriber,
  IdentityProcessor,
  createPublisher: (n) => new RangePublisher(n),
  createFailedPublisher: () => new RangePublisher(0, () => new Error('the reference publisher fails on purpose')),
  createSubscriber: () => new BufferedSubscriber(),
  createWhiteboxSubscriber: (observer) => new BufferedSubscriber(16, observer),
  createProcessor: () => new IdentityProcessor(),
};
