'use strict';
// 3.16: request throws a RangeError when the demand exceeds what is left of the stream.
const { RangePublisher, RangeSubscription } = require('../../../rstck/reference/js/reactive_streams.js');

class Strict extends RangeSubscription {
  request(n) {
    if (this._subscriber !== null && n > 0 && this._demand + n > this._count - this._next) {
      throw new RangeError(`only ${this._count - this._next} elements are left`);
    }
    super.request(n);
  }
}

class Publisher extends RangePublisher {
  newSubscription(...args) { return new Strict(...args); }
}

module.exports = { createPublisher: (n) => new Publisher(n) };
