'use strict';
// node.readable.9: pipe(dest) returns the source.
const { Stream, Readable, Writable } = require('../../../rstck/reference/js/streams.js');

class Mutant extends Readable {
  pipe(dest) {
    super.pipe(dest);
    return this;
  }
}

module.exports = {
  Stream,
  createReadable: (chunks) => new Mutant(chunks),
  createWritable: (options) => new Writable(options),
};
