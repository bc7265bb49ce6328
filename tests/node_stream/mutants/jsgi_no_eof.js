'use strict';
// jsgi.events.2: close() never leads to eof.
const { JsgiStream } = require('../../../rstck/reference/js/streams.js');

class Mutant extends JsgiStream {
  constructor() {
    super();
    this._eof = true;
  }
}

module.exports = { createJsgiStream: () => new Mutant() };
