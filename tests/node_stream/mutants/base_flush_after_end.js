'use strict';
// node.base.8: flush() after end() returns true instead of throwing.
const { Stream } = require('../../../rstck/reference/js/streams.js');

class Mutant extends Stream {
  flush(callback) {
    if (typeof callback === 'function') process.nextTick(callback);
    return true;
  }
}

module.exports = { Stream, createStream: () => new Mutant() };
