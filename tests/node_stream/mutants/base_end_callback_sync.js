'use strict';
// node.base.7: end() calls its callback before it returns.
const { Stream } = require('../../../rstck/reference/js/streams.js');

class Mutant extends Stream {
  end(chunk, callback) {
    if (typeof chunk === 'function') { callback = chunk; chunk = null; }
    const ret = super.end(chunk);
    if (typeof callback === 'function') callback();
    return ret;
  }
}

module.exports = { Stream, createStream: () => new Mutant() };
