'use strict';
// node.readable.11: every destroy() runs again, emitting destroy each time.
const { Stream, Readable } = require('../../../rstck/reference/js/streams.js');

class Mutant extends Readable {
  destroy(callback) {
    this.destroyed = false;
    super.destroy(callback);
  }
}

module.exports = { Stream, createReadable: (chunks) => new Mutant(chunks) };
