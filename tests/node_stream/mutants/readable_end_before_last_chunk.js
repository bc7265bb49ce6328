'use strict';
// node.readable.17: end comes just before the last data event.
const { Stream, Readable } = require('../../../rstck/reference/js/streams.js');

class Mutant extends Readable {
  emit(name, ...args) {
    if (name === 'data' && this._chunks.length === 0) this._emitEnd();
    return super.emit(name, ...args);
  }
}

module.exports = { Stream, createReadable: (chunks) => new Mutant(chunks) };
