'use strict';
// The readable-stream package (npm; installed from package-lock.json here) as a node-stream target:
// tests/node_stream/test_baselines.py.
module.exports = require('./family.js')(require('readable-stream'));
