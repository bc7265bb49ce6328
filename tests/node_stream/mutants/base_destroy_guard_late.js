'use strict';
// node.base.11: destroy() marks the stream destroyed only on the next tick, so `destroy(); destroy();` in one go
// emits destroy twice.
const { Stream } = require('../../../rstck/reference/js/streams.js');

class Mutant extends Stream {
  destroy(callback) {
    if (this._gone) return;
    this.emit('destroy');
    this._emitEnd();
    process.nextTick(() => {
      this._gone = true;
      this._emitClose();
      if (typeof callback === 'function') callback();
    });
  }
}

module.exports = { Stream, createStream: () => new Mutant() };
