'use strict';
// node.writable.15: end() says false while chunks wait, and no drain follows.
const { Stream, Writable } = require('../../../rstck/reference/js/streams.js');

class Mutant extends Writable {
  end(...args) {
    const ret = super.end(...args);
    this._needDrain = false;
    return ret;
  }
}

module.exports = { Stream, createWritable: (options) => new Mutant(options) };
