'use strict';
// node.base.2: write() after end() emits data like any other write instead of throwing.
const { Stream } = require('../../../rstck/reference/js/streams.js');

class Mutant extends Stream {
  write(chunk, callback) {
    this.emit('data', chunk);
    if (typeof callback === 'function') process.nextTick(callback);
    return true;
  }
}

module.exports = { Stream, createStream: () => new Mutant() };
