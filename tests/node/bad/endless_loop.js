'use strict';
// request never returns: an endless synchronous loop.
module.exports = {
  createPublisher: () => ({
    subscribe(subscriber) {
      subscriber.onSubscribe({ request() { for (;;) { /* spins */ } }, cancel() {} });
    },
  }),
};
