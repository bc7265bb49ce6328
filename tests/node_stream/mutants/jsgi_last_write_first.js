'use strict';
// jsgi.methods.3: a write jumps the queue: the data waiting comes out last in, first out.
const { JsgiStream } = require('../../../rstck/reference/js/streams.js');

class Mutant extends JsgiStream {
  write(data) {
    if (this._closed) return super.write(data);
    this._queue.unshift(data);
    this._schedule();
    return true;
  }
}

module.exports = { createJsgiStream: () => new Mutant() };
