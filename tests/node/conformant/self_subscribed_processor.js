'use strict';
// An identity processor that is its own subscription: the object a subscriber gets in onSubscribe is the
// processor itself, a shape many JavaScript libraries use. Elements reach the subscriber on microtasks.

function isPositive(n) {
  if (typeof n === 'bigint') return n > 0n;
  return typeof n === 'number' && n > 0;
}

function asCount(n) {
  // Demand is counted in Numbers; past Number.MAX_SAFE_INTEGER it is as good as infinite (3.17).
  const value = typeof n === 'bigint' ? Number(n) : n;
  return value >= Number.MAX_SAFE_INTEGER ? Infinity : value;
}

class Relay {
  constructor() {
    this.upstream = null;
    this.upstreamOver = false;
    this.owedUpstream = 0; // demand asked before the upstream subscription came
    this.subscriber = null;
    this.hadSubscriber = false;
    this.live = false;
    this.demand = 0;
    this.buffer = [];
    this.ending = null; // { error } or { complete: true }, waiting for the buffer to drain
    this.drainQueued = false;
  }

  // -- the publisher side --------------------------------------------------------------------------

  subscribe(subscriber) {
    if (subscriber == null) throw new TypeError('subscribe() needs a subscriber');
    if (this.hadSubscriber) {
      subscriber.onSubscribe({ request() {}, cancel() {} });
      queueMicrotask(() => subscriber.onError(new Error('this processor serves one subscriber only')));
      return;
    }
    this.hadSubscriber = true;
    this.subscriber = subscriber;
    this.live = true;
    subscriber.onSubscribe(this);
    if (this.ending !== null) this.scheduleDrain();
  }

  // -- the subscription it hands out: itself ---------------------------------------------------------

  request(n) {
    if (!this.live) return;
    if (!isPositive(n)) {
      this.dropUpstream();
      this.buffer = [];
      this.ending = { error: new RangeError(`request(${String(n)}): only positive requests are legal`) };
      this.scheduleDrain();
      return;
    }
    this.demand += asCount(n);
    if (this.upstream !== null && !this.upstreamOver) this.upstream.request(n);
    else if (this.upstream === null) this.owedUpstream += asCount(n);
    this.scheduleDrain();
  }

  cancel() {
    if (!this.live) return;
    this.live = false;
    this.subscriber = null;
    this.buffer = [];
    this.dropUpstream();
  }

  // -- the subscriber side -----------------------------------------------------------------------------

  onSubscribe(subscription) {
    if (subscription == null) throw new TypeError('onSubscribe() needs a subscription');
    if (this.upstream !== null || this.upstreamOver) {
      subscription.cancel();
      return;
    }
    this.upstream = subscription;
    if (this.owedUpstream > 0) {
      const owed = this.owedUpstream;
      this.owedUpstream = 0;
      subscription.request(owed);
    }
  }

  onNext(element) {
    if (element == null) throw new TypeError('onNext() needs an element');
    if (this.upstreamOver || !this.live) return;
    this.buffer.push(element);
    this.scheduleDrain();
  }

  onError(error) {
    if (error == null) throw new TypeError('onError() needs an error');
    if (this.upstreamOver) return;
    this.upstreamOver = true;
    this.upstream = null;
    this.buffer = [];
    this.ending = { error };
    this.scheduleDrain();
  }

  onComplete() {
    if (this.upstreamOver) return;
    this.upstreamOver = true;
    this.upstream = null;
    this.ending = { complete: true };
    this.scheduleDrain();
  }

  // -- internals ---------------------------------------------------------------------------------------

  dropUpstream() {
    const upstream = this.upstream;
    this.upstream = null;
    const wasOver = this.upstreamOver;
    this.upstreamOver = true;
    if (upstream !== null && !wasOver) upstream.cancel();
  }

  scheduleDrain() {
    if (this.drainQueued) return;
    this.drainQueued = true;
    queueMicrotask(() => {
      this.drainQueued = false;
      this.drain();
    });
  }

  drain() {
    while (this.live && this.demand > 0 && this.buffer.length > 0) {
      this.demand -= 1;
      const element = this.buffer.shift();
      try {
        this.subscriber.onNext(element);
      } catch (err) {
        console.error('the subscriber threw from onNext; cancelling', err);
        this.cancel();
      }
    }
    if (this.live && this.ending !== null && this.buffer.length === 0) {
      const subscriber = this.subscriber;
      const ending = this.ending;
      this.live = false;
      this.subscriber = null;
      try {
        if (ending.error) subscriber.onError(ending.error);
        else subscriber.onComplete();
      } catch (err) {
        console.error('the subscriber threw from its terminal signal', err);
      }
    }
  }
}

module.exports = { Relay, createProcessor: () => new Relay() };
