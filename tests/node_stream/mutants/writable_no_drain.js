'use strict';
// node.writable.7, node.writable.24, node.writable.25: no drain, ever.
const { Stream, Writable } = require('../../../rstck/reference/js/streams.js');

class Mutant extends Writable {
  _emptied() {
    this._needDrain = false;
    super._emptied();
  }
}

module.exports = { Stream, createWritable: (options) => new Mutant(options) };
