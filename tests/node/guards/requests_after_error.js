'use strict';
// After onError, the subscriber requests again on a later turn: a NOP on a cancelled subscription (1.6, 3.6),
// which 2.4 asks it to consider the subscription to be; no rule forbids the call (docs/decisions.md, 2.4).
const { BufferedSubscriber } = require('../../../rstck/reference/js/reactive_streams.js');

class Persistent extends BufferedSubscriber {
  onSubscribe(subscription) {
    super.onSubscribe(subscription);
    if (this._kept === undefined) this._kept = subscription;
  }

  onError(error) {
    super.onError(error);
    setImmediate(() => this._kept.request(1));
  }
}

module.exports = { createSubscriber: () => new Persistent() };
