'use strict';
// 2.4: after onError, the subscriber requests again on a later turn.
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
