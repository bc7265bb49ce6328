'use strict';
// 3.13: cancel stops the stream, but the publisher keeps every subscriber it ever had.
const { RangePublisher } = require('../../../rstck/reference/js/reactive_streams.js');

class Publisher extends RangePublisher {
  constructor(n) {
    super(n);
    this._everyone = [];
  }

  subscribe(subscriber) {
    if (subscriber !== null && subscriber !== undefined) this._everyone.push(subscriber);
    super.subscribe(subscriber);
  }
}

module.exports = { createPublisher: (n) => new Publisher(n) };
