'use strict';
// 2.1: the subscriber never signals demand.
const { BufferedSubscriber } = require('../../../rstck/reference/js/reactive_streams.js');

class Idle extends BufferedSubscriber {
  _request() {}
}

module.exports = { createSubscriber: () => new Idle() };
