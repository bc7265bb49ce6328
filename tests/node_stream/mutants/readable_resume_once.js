'use strict';
// node.readable.6: only the first resume() (the one a data listener makes) starts the flow; once paused, the
// stream stays paused.
const { Stream, Readable } = require('../../../rstck/reference/js/streams.js');

class Mutant extends Readable {
  resume() {
    if (this._resumed) {
      this.emit('resume');
      return;
    }
    this._resumed = true;
    super.resume();
  }
}

module.exports = { Stream, createReadable: (chunks) => new Mutant(chunks) };
