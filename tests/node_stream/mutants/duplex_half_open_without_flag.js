'use strict';
// node.duplex.1, node.duplex.3: allowHalfOpen is false, yet end() leaves the stream half open.
const { Stream, Duplex } = require('../../../rstck/reference/js/streams.js');

class Mutant extends Duplex {
  constructor() {
    super({ allowHalfOpen: false });
  }

  _flushed() {
    const callback = this._endCallback;
    this._endCallback = null;
    if (typeof callback === 'function') callback();
  }
}

module.exports = { Stream, createDuplex: () => new Mutant() };
