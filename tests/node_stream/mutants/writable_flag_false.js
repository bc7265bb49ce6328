'use strict';
// node.writable.3: the writable flag is false from the start.
const { Stream, Writable } = require('../../../rstck/reference/js/streams.js');

class Mutant extends Writable {
  constructor(options) {
    super(options);
    this.writable = false;
  }
}

module.exports = { Stream, createWritable: (options) => new Mutant(options) };
