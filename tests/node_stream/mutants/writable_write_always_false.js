'use strict';
// node.writable.5: write() says false even when nothing waits.
const { Stream, Writable } = require('../../../rstck/reference/js/streams.js');

class Mutant extends Writable {
  write(chunk, callback) {
    super.write(chunk, callback);
    return false;
  }
}

module.exports = { Stream, createWritable: (options) => new Mutant(options) };
