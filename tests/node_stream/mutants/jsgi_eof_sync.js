'use strict';
// jsgi.timing.1, jsgi.timing.2: close() on an empty stream emits eof before it returns.
const { JsgiStream } = require('../../../rstck/reference/js/streams.js');

class Mutant extends JsgiStream {
  close() {
    if (this._queue.length || this._paused || this._eof) return super.close();
    this._closed = true;
    this._eof = true;
    this.emit('eof');
  }
}

module.exports = { createJsgiStream: () => new Mutant() };
