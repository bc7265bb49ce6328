'use strict';
// node.writable.12: end(chunk, callback) writes the chunk but never calls the callback (end(callback) does).
const { Stream, Writable } = require('../../../rstck/reference/js/streams.js');

class Mutant extends Writable {
  end(chunk) {
    return super.end(chunk); // end(callback) still reaches the reference as its callback
  }
}

module.exports = { Stream, createWritable: (options) => new Mutant(options) };
