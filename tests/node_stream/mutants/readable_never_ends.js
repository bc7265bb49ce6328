'use strict';
// node.readable.4, node.readable.13, node.readable.17: a readable that runs out of chunks never emits end (it
// still does when destroyed).
const { Stream, Readable } = require('../../../rstck/reference/js/streams.js');

class Mutant extends Readable {
  _emitEnd() {
    if (this.destroyed) super._emitEnd();
  }
}

module.exports = { Stream, createReadable: (chunks) => new Mutant(chunks) };
