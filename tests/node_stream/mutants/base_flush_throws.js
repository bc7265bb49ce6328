'use strict';
// node.base.9: flush() throws on a fresh stream.
const { Stream } = require('../../../rstck/reference/js/streams.js');

class Mutant extends Stream {
  flush() { throw new Error('nothing to flush'); }
}

module.exports = { Stream, createStream: () => new Mutant() };
