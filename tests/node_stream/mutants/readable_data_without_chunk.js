'use strict';
// node.readable.14, node.readable.15: an empty data event before end.
const { Stream, Readable } = require('../../../rstck/reference/js/streams.js');

class Mutant extends Readable {
  _emitEnd() {
    if (!this._endEmitted && !this.destroyed) this.emit('data');
    super._emitEnd();
  }
}

module.exports = { Stream, createReadable: (chunks) => new Mutant(chunks) };
