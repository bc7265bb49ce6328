'use strict';
// node.writable.7, node.writable.25: drain comes on the next tick after a write() said false, while the queue
// is still full.
const { Stream, Writable } = require('../../../rstck/reference/js/streams.js');

class Mutant extends Writable {
  write(chunk, callback) {
    const ret = super.write(chunk, callback);
    if (ret === false) {
      this._needDrain = false;
      process.nextTick(() => this.emit('drain'));
    }
    return ret;
  }
}

module.exports = { Stream, createWritable: (options) => new Mutant(options) };
