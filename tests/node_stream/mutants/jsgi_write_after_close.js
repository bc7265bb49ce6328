'use strict';
// jsgi.methods.1: write() to a closed stream drops the data instead of throwing.
const { JsgiStream } = require('../../../rstck/reference/js/streams.js');

class Mutant extends JsgiStream {
  write(data) {
    if (this._closed) return false;
    return super.write(data);
  }
}

module.exports = { createJsgiStream: () => new Mutant() };
