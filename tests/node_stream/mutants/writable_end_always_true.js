'use strict';
// node.writable.13: end() says true while chunks still wait.
const { Stream, Writable } = require('../../../rstck/reference/js/streams.js');

class Mutant extends Writable {
  end(...args) {
    super.end(...args);
    return true;
  }
}

module.exports = { Stream, createWritable: (options) => new Mutant(options) };
