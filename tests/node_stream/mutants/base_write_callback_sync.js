'use strict';
// node.base.4: write() calls its callback before it returns.
const { Stream } = require('../../../rstck/reference/js/streams.js');

class Mutant extends Stream {
  write(chunk, callback) {
    const ret = super.write(chunk);
    if (typeof callback === 'function') callback();
    return ret;
  }
}

module.exports = { Stream, createStream: () => new Mutant() };
