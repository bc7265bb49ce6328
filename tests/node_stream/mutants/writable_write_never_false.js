'use strict';
// node.writable.6: write() says true however many chunks wait.
const { Stream, Writable } = require('../../../rstck/reference/js/streams.js');

class Mutant extends Writable {
  write(chunk, callback) {
    super.write(chunk, callback);
    return true;
  }
}

module.exports = { Stream, createWritable: (options) => new Mutant(options) };
