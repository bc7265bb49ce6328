'use strict';
// node.duplex.3: allowHalfOpen is false and end() emits destroy, but the readable side stays open.
const { Stream, Duplex } = require('../../../rstck/reference/js/streams.js');

class Mutant extends Duplex {
  constructor() {
    super({ allowHalfOpen: false });
  }

  _flushed() {
    if (!this.ended || this.destroyed) return;
    this.writable = false;
    this.emit('destroy');
  }
}

module.exports = { Stream, createDuplex: () => new Mutant() };
