'use strict';
// 1.7: onComplete is signalled twice.
const { RangePublisher, RangeSubscription } = require('../../../rstck/reference/js/reactive_streams.js');

class CompletingTwice extends RangeSubscription {
  _terminate(method, error) {
    const subscriber = this._subscriber;
    super._terminate(method, error);
    if (method === 'onComplete') subscriber.onComplete();
  }
}

class Publisher extends RangePublisher {
  newSubscription(...args) { return new CompletingTwice(...args); }
}

module.exports = { createPublisher: (n) => new Publisher(n) };
