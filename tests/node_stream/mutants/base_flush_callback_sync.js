'use strict';
// node.base.10: flush() calls its callback before it returns.
const { Stream } = require('../../../rstck/reference/js/streams.js');

class Mutant extends Stream {
  flush(callback) {
    const ret = super.flush();
    if (typeof callback === 'function') callback();
    return ret;
  }
}

module.exports = { Stream, createStream: () => new Mutant() };
