'use strict';
// 3.12, 1.8: cancel does nothing; the stream goes on.
const { RangePublisher, RangeSubscription } = require('../../../rstck/reference/js/reactive_streams.js');

class Uncancellable extends RangeSubscription {
  cancel() {}
}

class Publisher extends RangePublisher {
  newSubscription(...args) { return new Uncancellable(...args); }
}

module.exports = { createPublisher: (n) => new Publisher(n) };
