'use strict';
// node.writable.12: end(callback) never calls its callback.
const { Stream, Writable } = require('../../../rstck/reference/js/streams.js');

class Mutant extends Writable {
  end(chunk) {
    return super.end(typeof chunk === 'function' ? null : chunk);
  }
}

module.exports = { Stream, createWritable: (options) => new Mutant(options) };
