'use strict';
// node.writable.22: flush()'s callback comes on the next tick, while chunks still wait.
const { Stream, Writable } = require('../../../rstck/reference/js/streams.js');

class Mutant extends Writable {
  flush(callback) {
    const ret = super.flush();
    if (typeof callback === 'function') process.nextTick(callback);
    return ret;
  }
}

module.exports = { Stream, createWritable: (options) => new Mutant(options) };
