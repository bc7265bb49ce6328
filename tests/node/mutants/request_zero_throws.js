'use strict';
// 3.9 and 3.16: request(n <= 0) throws a RangeError at its caller instead of signalling onError.
const { RangePublisher, RangeSubscription } = require('../../../rstck/reference/js/reactive_streams.js');

class Throwing extends RangeSubscription {
  request(n) {
    if (!(n > 0)) throw new RangeError(`request(${String(n)}): n must be positive`);
    super.request(n);
  }
}

class Publisher extends RangePublisher {
  newSubscription(...args) { return new Throwing(...args); }
}

module.exports = { createPublisher: (n) => new Publisher(n) };
