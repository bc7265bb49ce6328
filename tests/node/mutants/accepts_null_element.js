'use strict';
// 2.13: onNext(null) returns normally instead of throwing a TypeError.
const { BufferedSubscriber } = require('../../../rstck/reference/js/reactive_streams.js');

class Tolerant extends BufferedSubscriber {
  onNext(element) {
    if (element === null || element === undefined) return;
    super.onNext(element);
  }
}

module.exports = { createSubscriber: () => new Tolerant() };
