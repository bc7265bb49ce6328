'use strict';
// node.writable.18: destroy(callback) calls its callback before it returns.
const { Stream, Writable } = require('../../../rstck/reference/js/streams.js');

class Mutant extends Writable {
  destroy(callback) {
    super.destroy();
    if (typeof callback === 'function') callback();
  }
}

module.exports = { Stream, createWritable: (options) => new Mutant(options) };
