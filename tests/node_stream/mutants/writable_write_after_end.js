'use strict';
// node.writable.10: write() after end() returns false instead of throwing.
const { Stream, Writable } = require('../../../rstck/reference/js/streams.js');

class Mutant extends Writable {
  write(chunk, callback) {
    if (this.ended) return false;
    return super.write(chunk, callback);
  }
}

module.exports = { Stream, createWritable: (options) => new Mutant(options) };
