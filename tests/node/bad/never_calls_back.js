'use strict';
// subscribe returns and nothing ever happens: no onSubscribe, no signal.
module.exports = { createPublisher: () => ({ subscribe() {} }) };
