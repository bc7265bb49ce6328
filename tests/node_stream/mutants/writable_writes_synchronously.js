'use strict';
// node.writable.9: with nothing queued, a chunk is written inside write(), and its callback called there too.
const { Stream, Writable } = require('../../../rstck/reference/js/streams.js');

class Mutant extends Writable {
  write(chunk, callback) {
    if (this._queue.length || this._writing || this.ended || this.destroyed) return super.write(chunk, callback);
    this._sink(chunk);
    if (typeof callback === 'function') callback();
    return true;
  }
}

module.exports = { Stream, createWritable: (options) => new Mutant(options) };
