'use strict';
// request returns at once, then a callback of its own spins for ever: the driver cannot answer any more.
module.exports = {
  createPublisher: () => ({
    subscribe(subscriber) {
      if (subscriber === null || subscriber === undefined) throw new TypeError('1.9: subscribe(null)');
      subscriber.onSubscribe({
        request() { setImmediate(() => { for (;;) { /* spins */ } }); },
        cancel() {},
      });
    },
  }),
};
