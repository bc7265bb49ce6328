'use strict';
// 1.9: an empty stream is completed without onSubscribe first.
const { RangePublisher, RangeSubscription } = require('../../../rstck/reference/js/reactive_streams.js');

class Unannounced extends RangeSubscription {
  _signal(subscriber, method, ...args) {
    if (method === 'onSubscribe' && this._count === 0) return;
    super._signal(subscriber, method, ...args);
  }
}

class Publisher extends RangePublisher {
  newSubscription(...args) { return new Unannounced(...args); }
}

module.exports = { createPublisher: (n) => new Publisher(n) };
