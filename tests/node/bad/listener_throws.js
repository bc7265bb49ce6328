'use strict';
// Delivers through an EventEmitter whose listener throws once the first element is out, on a later turn:
// an uncaught exception outside any call of the kit's.
const { EventEmitter } = require('events');
const reference = require('../../../rstck/reference/js/reactive_streams.js');

function createPublisher(n) {
  const inner = reference.createPublisher(n);
  const events = new EventEmitter();
  events.on('delivered', () => { throw new Error('a listener broke'); });
  return {
    subscribe(subscriber) {
      inner.subscribe({
        onSubscribe: (s) => subscriber.onSubscribe(s),
        onNext: (x) => { subscriber.onNext(x); setImmediate(() => events.emit('delivered', x)); },
        onError: (e) => subscriber.onError(e),
        onComplete: () => subscriber.onComplete(),
      });
    },
  };
}
module.exports = { createPublisher };
