'use strict';
// node.writable.11: end(chunk) drops its chunk.
const { Stream, Writable } = require('../../../rstck/reference/js/streams.js');

class Mutant extends Writable {
  end(chunk, callback) {
    if (typeof chunk === 'function') return super.end(chunk);
    return super.end(null, callback);
  }
}

module.exports = { Stream, createWritable: (options) => new Mutant(options) };
