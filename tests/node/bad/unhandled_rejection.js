'use strict';
// Completes the stream, then rejects a promise nobody handles.
const reference = require('../../../rstck/reference/js/reactive_streams.js');

function createPublisher(n) {
  const inner = reference.createPublisher(n);
  return {
    subscribe(subscriber) {
      Promise.reject(new TypeError('nobody handles this rejection'));
      inner.subscribe(subscriber);
    },
  };
}
module.exports = { createPublisher };
