'use strict';
// node.writable.27: never emits close.
const { Stream, Writable } = require('../../../rstck/reference/js/streams.js');

class Mutant extends Writable {
  _emitClose() {}
}

module.exports = { Stream, createWritable: (options) => new Mutant(options) };
