'use strict';
// 1.1: the first request counts one element more than was asked for.
const { RangePublisher, RangeSubscription } = require('../../../rstck/reference/js/reactive_streams.js');

class OverDelivering extends RangeSubscription {
  request(n) {
    const extra = this._overDelivered ? 0 : 1;
    this._overDelivered = true;
    super.request(typeof n === 'number' && n > 0 ? n + extra : n);
  }
}

class Publisher extends RangePublisher {
  newSubscription(...args) { return new OverDelivering(...args); }
}

module.exports = { createPublisher: (n) => new Publisher(n) };
