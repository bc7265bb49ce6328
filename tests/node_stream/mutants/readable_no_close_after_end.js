'use strict';
// node.readable.19: a readable that has flowed never emits close, not even when destroyed.
const { Stream, Readable } = require('../../../rstck/reference/js/streams.js');

class Mutant extends Readable {
  _emitClose() {
    if (!this._started) super._emitClose();
  }
}

module.exports = { Stream, createReadable: (chunks) => new Mutant(chunks) };
