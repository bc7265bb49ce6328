'use strict';
// node.readable.4: the readable flag stays true after end and after destroy().
const { Stream, Readable } = require('../../../rstck/reference/js/streams.js');

class Mutant extends Readable {
  _emitEnd() {
    super._emitEnd();
    this.readable = true;
  }

  destroy(callback) {
    super.destroy(callback);
    this.readable = true;
  }
}

module.exports = { Stream, createReadable: (chunks) => new Mutant(chunks) };
