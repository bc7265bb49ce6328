'use strict';
// jsgi.methods.2, jsgi.timing.1, jsgi.timing.2: with nothing queued, write() emits data before it returns (drain
// still follows on the next tick).
const { JsgiStream } = require('../../../rstck/reference/js/streams.js');

class Mutant extends JsgiStream {
  write(data) {
    if (this._closed || this._paused || this._queue.length) return super.write(data);
    this.emit('data', data);
    process.nextTick(() => this.emit('drain'));
    return true;
  }
}

module.exports = { createJsgiStream: () => new Mutant() };
