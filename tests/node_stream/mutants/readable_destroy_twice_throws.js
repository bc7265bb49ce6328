'use strict';
// node.readable.11, node.readable.12: a second destroy() throws.
const { Stream, Readable } = require('../../../rstck/reference/js/streams.js');

class Mutant extends Readable {
  destroy(callback) {
    if (this.destroyed) throw new Error('already destroyed');
    super.destroy(callback);
  }
}

module.exports = { Stream, createReadable: (chunks) => new Mutant(chunks) };
