'use strict';
// node.guidelines.1: a readable destroyed while it flows emits no end.
const { Stream, Readable } = require('../../../rstck/reference/js/streams.js');

class Mutant extends Readable {
  destroy(callback) {
    if (this._started) this._endEmitted = true;
    super.destroy(callback);
  }
}

module.exports = { Stream, createReadable: (chunks) => new Mutant(chunks) };
