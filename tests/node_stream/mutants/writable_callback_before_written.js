'use strict';
// node.writable.8: write()'s callback comes on the next tick, before the chunk is written.
const { Stream, Writable } = require('../../../rstck/reference/js/streams.js');

class Mutant extends Writable {
  write(chunk, callback) {
    const ret = super.write(chunk);
    if (typeof callback === 'function') process.nextTick(callback);
    return ret;
  }
}

module.exports = { Stream, createWritable: (options) => new Mutant(options) };
