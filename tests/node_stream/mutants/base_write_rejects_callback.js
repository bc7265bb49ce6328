'use strict';
// node.base.3: write(chunk, callback) throws when given a callback (write(chunk) alone works).
const { Stream } = require('../../../rstck/reference/js/streams.js');

class Mutant extends Stream {
  write(chunk, callback) {
    if (callback !== undefined && callback !== null) throw new TypeError('write() takes no callback');
    return super.write(chunk);
  }
}

module.exports = { Stream, createStream: () => new Mutant() };
