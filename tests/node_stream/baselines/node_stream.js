'use strict';
// Node's own streams (require('stream')) as a node-stream target: tests/node_stream/test_baselines.py.
module.exports = require('./family.js')(require('stream'));
