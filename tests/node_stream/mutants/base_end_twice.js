'use strict';
// node.base.5: a second end() is accepted silently.
const { Stream } = require('../../../rstck/reference/js/streams.js');

class Mutant extends Stream {
  end(chunk, callback) {
    this.ended = false;
    return super.end(chunk, callback);
  }
}

module.exports = { Stream, createStream: () => new Mutant() };
