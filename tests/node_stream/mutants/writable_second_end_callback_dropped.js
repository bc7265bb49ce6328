'use strict';
// node.writable.12: a second end(callback) returns normally but never calls its callback.
const { Stream, Writable } = require('../../../rstck/reference/js/streams.js');

class Mutant extends Writable {
  end(chunk, callback) {
    if (this.ended) return true;
    return super.end(chunk, callback);
  }
}

module.exports = { Stream, createWritable: (options) => new Mutant(options) };
