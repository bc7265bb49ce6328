'use strict';
// jsgi.methods.4: write() to a closed stream throws, yet its data is delivered.
const { JsgiStream } = require('../../../rstck/reference/js/streams.js');

class Mutant extends JsgiStream {
  write(data) {
    if (this._closed) {
      this._queue.push(data);
      this._schedule();
    }
    return super.write(data);
  }
}

module.exports = { createJsgiStream: () => new Mutant() };
