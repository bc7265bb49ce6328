'use strict';
// 2.5: a second subscription is neither used nor cancelled.
const { BufferedSubscriber } = require('../../../rstck/reference/js/reactive_streams.js');

class Forgetful extends BufferedSubscriber {
  onSubscribe(subscription) {
    if (this._used && subscription !== null && subscription !== undefined) return;
    super.onSubscribe(subscription);
  }
}

module.exports = { createSubscriber: () => new Forgetful() };
