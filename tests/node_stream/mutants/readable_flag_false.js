'use strict';
// node.readable.3: the readable flag is false from the start.
const { Stream, Readable } = require('../../../rstck/reference/js/streams.js');

class Mutant extends Readable {
  constructor(chunks) {
    super(chunks);
    this.readable = false;
  }
}

module.exports = { Stream, createReadable: (chunks) => new Mutant(chunks) };
