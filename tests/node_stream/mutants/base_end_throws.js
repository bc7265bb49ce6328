'use strict';
// node.base.6: end() throws on a fresh stream.
const { Stream } = require('../../../rstck/reference/js/streams.js');

class Mutant extends Stream {
  end() { throw new Error('cannot end'); }
}

module.exports = { Stream, createStream: () => new Mutant() };
