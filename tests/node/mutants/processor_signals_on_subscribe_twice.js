'use strict';
// 2.12, found on the processor only: the module's publisher is the conformant reference; its processor calls
// onSubscribe a second time on each subscriber.
const reference = require('../../../rstck/reference/js/reactive_streams.js');

class Repeating extends reference.IdentityProcessor {
  subscribe(subscriber) {
    super.subscribe(subscriber);
    subscriber.onSubscribe({ request() {}, cancel() {} });
  }
}

module.exports = { createPublisher: reference.createPublisher, createProcessor: () => new Repeating() };
