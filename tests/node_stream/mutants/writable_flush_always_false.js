'use strict';
// node.writable.21: flush() says false even with an empty queue.
const { Stream, Writable } = require('../../../rstck/reference/js/streams.js');

class Mutant extends Writable {
  flush(callback) {
    super.flush(callback);
    return false;
  }
}

module.exports = { Stream, createWritable: (options) => new Mutant(options) };
