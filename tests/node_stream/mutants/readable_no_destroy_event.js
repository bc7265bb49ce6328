'use strict';
// node.readable.10: destroy() ends and closes the stream but never emits destroy.
const { Stream, Readable } = require('../../../rstck/reference/js/streams.js');

class Mutant extends Readable {
  destroy(callback) {
    if (this.destroyed) return;
    this.destroyed = true;
    this.readable = false;
    this._emitEnd();
    process.nextTick(() => {
      this._emitClose();
      if (typeof callback === 'function') callback();
    });
  }
}

module.exports = { Stream, createReadable: (chunks) => new Mutant(chunks) };
