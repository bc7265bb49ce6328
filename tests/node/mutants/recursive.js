'use strict';
// 3.3: request delivers recursively (request -> onNext -> request -> ...), with no bound on the depth.
const { RangePublisher, RangeSubscription } = require('../../../rstck/reference/js/reactive_streams.js');

class Recursive extends RangeSubscription {
  request(n) {
    if (this._subscriber === null || this._error !== null) return;
    if (!(n > 0)) {
      super.request(n);
      return;
    }
    this._demand += n;
    while (this._demand >= 1 && this._subscriber !== null && this._next < this._count) {
      this._demand -= 1;
      const element = this._next;
      this._next += 1;
      this._signal(this._subscriber, 'onNext', element);
    }
    if (this._subscriber !== null && this._next >= this._count) this._terminate('onComplete');
  }
}

class Publisher extends RangePublisher {
  newSubscription(...args) { return new Recursive(...args); }
}

module.exports = { createPublisher: (n) => new Publisher(n) };
