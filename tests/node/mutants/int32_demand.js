'use strict';
// 3.17: demand kept as a 32-bit integer: (demand + n) | 0. request(2**63-1) arrives as the Number 2**63,
// which | 0 turns into 0: the demand is lost.
const { RangePublisher, RangeSubscription } = require('../../../rstck/reference/js/reactive_streams.js');

class Int32Demand extends RangeSubscription {
  request(n) {
    if (this._subscriber === null || this._error !== null) return;
    if (!(n > 0)) {
      super.request(n);
      return;
    }
    this._demand = (this._demand + n) | 0;
    this._serial.post(() => this._drain());
  }
}

class Publisher extends RangePublisher {
  newSubscription(...args) { return new Int32Demand(...args); }
}

module.exports = { createPublisher: (n) => new Publisher(n) };
