'use strict';
// 3.16 and 3.17: request(n) throws a RangeError for a demand a Number cannot count exactly, so a demand of
// 2**63-1 (which reaches JavaScript as the Number 2**63) is refused at its caller.
const { RangePublisher, RangeSubscription } = require('../../../rstck/reference/js/reactive_streams.js');

class Cautious extends RangeSubscription {
  request(n) {
    if (Number(n) > Number.MAX_SAFE_INTEGER) throw new RangeError(`request(${String(n)}): too large to count`);
    super.request(n);
  }
}

class Publisher extends RangePublisher {
  newSubscription(...args) { return new Cautious(...args); }
}

module.exports = { createPublisher: (n) => new Publisher(n) };
