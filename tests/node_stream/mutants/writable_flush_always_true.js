'use strict';
// node.writable.20: flush() says true while chunks still wait.
const { Stream, Writable } = require('../../../rstck/reference/js/streams.js');

class Mutant extends Writable {
  flush(callback) {
    super.flush(callback);
    return true;
  }
}

module.exports = { Stream, createWritable: (options) => new Mutant(options) };
