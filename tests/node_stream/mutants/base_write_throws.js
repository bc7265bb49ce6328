'use strict';
// node.base.3: write() throws on a fresh stream.
const { Stream } = require('../../../rstck/reference/js/streams.js');

class Mutant extends Stream {
  write() { throw new Error('not writable yet'); }
}

module.exports = { Stream, createStream: () => new Mutant() };
