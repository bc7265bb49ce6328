'use strict';
// node.writable.2: no writable flag at all.
const { Stream, Writable } = require('../../../rstck/reference/js/streams.js');

class Mutant extends Writable {
  constructor(options) {
    super(options);
    delete this.writable;
  }
}

module.exports = { Stream, createWritable: (options) => new Mutant(options) };
