'use strict';
// 1.9: subscribe(null) returns normally instead of throwing a TypeError.
const { RangePublisher } = require('../../../rstck/reference/js/reactive_streams.js');

class Publisher extends RangePublisher {
  subscribe(subscriber) {
    if (subscriber === null || subscriber === undefined) return;
    super.subscribe(subscriber);
  }
}

module.exports = { createPublisher: (n) => new Publisher(n) };
