'use strict';
// createPublisher forgets to return its publisher.
module.exports = { createPublisher: () => { /* no return */ } };
