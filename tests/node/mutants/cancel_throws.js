'use strict';
// 3.15: cancel throws (after it has cancelled) while the subscription is live.
const { RangePublisher, RangeSubscription } = require('../../../rstck/reference/js/reactive_streams.js');

class ThrowingCancel extends RangeSubscription {
  cancel() {
    const live = this._subscriber !== null;
    super.cancel();
    if (live) throw new Error('cancel refuses');
  }
}

class Publisher extends RangePublisher {
  newSubscription(...args) { return new ThrowingCancel(...args); }
}

module.exports = { createPublisher: (n) => new Publisher(n) };
