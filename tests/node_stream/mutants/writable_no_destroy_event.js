'use strict';
// node.writable.16, node.writable.24: destroy() cleans up and closes but never emits destroy.
const { Stream, Writable } = require('../../../rstck/reference/js/streams.js');

class Mutant extends Writable {
  destroy(callback) {
    if (this.destroyed) return;
    this.destroyed = true;
    this.writable = false;
    this._queue = [];
    process.nextTick(() => {
      this._emitClose();
      if (typeof callback === 'function') callback();
    });
  }
}

module.exports = { Stream, createWritable: (options) => new Mutant(options) };
