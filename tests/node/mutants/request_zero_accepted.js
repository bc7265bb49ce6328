'use strict';
// 3.9: request(n <= 0) is ignored instead of signalling onError(RangeError).
const { RangePublisher, RangeSubscription } = require('../../../rstck/reference/js/reactive_streams.js');

class Lenient extends RangeSubscription {
  request(n) {
    if (n > 0) super.request(n);
  }
}

class Publisher extends RangePublisher {
  newSubscription(...args) { return new Lenient(...args); }
}

module.exports = { createPublisher: (n) => new Publisher(n) };
