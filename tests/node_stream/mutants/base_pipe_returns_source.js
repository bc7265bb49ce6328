'use strict';
// node.base.12: pipe(dest) returns the source, for chaining the wrong way round.
const { Stream } = require('../../../rstck/reference/js/streams.js');

class Mutant extends Stream {
  pipe(dest) {
    super.pipe(dest);
    return this;
  }
}

module.exports = { Stream, createStream: () => new Mutant() };
