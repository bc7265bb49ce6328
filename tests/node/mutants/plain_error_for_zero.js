'use strict';
// 3.9: request(0) signals onError, but with a plain Error where JavaScript's profile wants a RangeError.
const { RangePublisher, RangeSubscription } = require('../../../rstck/reference/js/reactive_streams.js');

class PlainError extends RangeSubscription {
  request(n) {
    if (this._subscriber !== null && this._error === null && !(n > 0)) {
      this._error = new Error(`3.9: non-positive request signals are illegal, got ${n}`);
      this._serial.post(() => this._drain());
      return;
    }
    super.request(n);
  }
}

class Publisher extends RangePublisher {
  newSubscription(...args) { return new PlainError(...args); }
}

module.exports = { createPublisher: (n) => new Publisher(n) };
