'use strict';
// 2.3: the subscriber requests more from inside onComplete.
const { BufferedSubscriber } = require('../../../rstck/reference/js/reactive_streams.js');

class Greedy extends BufferedSubscriber {
  onSubscribe(subscription) {
    super.onSubscribe(subscription);
    if (this._kept === undefined) this._kept = subscription;
  }

  onComplete() {
    super.onComplete();
    this._kept.request(1);
  }
}

module.exports = { createSubscriber: () => new Greedy() };
