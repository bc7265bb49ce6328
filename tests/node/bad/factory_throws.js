'use strict';
// createPublisher throws instead of making a publisher.
function createPublisher() {
  throw new Error('no publisher today');
}
module.exports = { createPublisher };
