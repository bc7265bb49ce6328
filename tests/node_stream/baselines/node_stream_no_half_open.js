'use strict';
// Node's own Duplex made with allowHalfOpen: false, the only kind node.duplex.3 concerns:
// tests/node_stream/test_baselines.py.
const { createDuplex } = require('./family.js')(require('stream'), { allowHalfOpen: false });

module.exports = { createDuplex };
