'use strict';
// Calls process.exit(3) inside request.
module.exports = {
  createPublisher: () => ({
    subscribe(subscriber) {
      subscriber.onSubscribe({ request() { process.exit(3); }, cancel() {} });
    },
  }),
};
