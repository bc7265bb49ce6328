'use strict';
// node.readable.20: a readable destroyed before it flowed never emits close.
const { Stream, Readable } = require('../../../rstck/reference/js/streams.js');

class Mutant extends Readable {
  _emitClose() {
    if (this._started) super._emitClose();
  }
}

module.exports = { Stream, createReadable: (chunks) => new Mutant(chunks) };
