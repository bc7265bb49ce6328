'use strict';
// 3.13 on a processor that is its own subscription: cancel stops the stream, but the processor keeps its
// subscriber.
const { Relay } = require('../conformant/self_subscribed_processor.js');

class Keeping extends Relay {
  cancel() {
    if (this.subscriber !== null) this.cancelledSubscriber = this.subscriber;
    super.cancel();
  }
}

module.exports = { createProcessor: () => new Keeping() };
