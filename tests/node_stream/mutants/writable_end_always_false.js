'use strict';
// node.writable.14: end() says false even with an empty queue.
const { Stream, Writable } = require('../../../rstck/reference/js/streams.js');

class Mutant extends Writable {
  end(...args) {
    super.end(...args);
    return false;
  }
}

module.exports = { Stream, createWritable: (options) => new Mutant(options) };
