'use strict';
// node.readable.14: the first chunk is never emitted.
const { Stream, Readable } = require('../../../rstck/reference/js/streams.js');

module.exports = { Stream, createReadable: (chunks) => new Readable(chunks.slice(1)) };
