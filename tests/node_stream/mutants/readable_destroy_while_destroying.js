'use strict';
// node.readable.12: a destroy() while the first is still cleaning up (before its close, on the next tick) emits
// an error: `stream.destroy(); stream.destroy();` in one go breaks.
const { Stream, Readable } = require('../../../rstck/reference/js/streams.js');

class Mutant extends Readable {
  destroy(callback) {
    if (this.destroyed && !this._closeEmitted) {
      this.emit('error', new Error('destroy() while destroying'));
      return;
    }
    super.destroy(callback);
  }
}

module.exports = { Stream, createReadable: (chunks) => new Mutant(chunks) };
