'use strict';
// node.writable.17: destroy(callback) never calls its callback.
const { Stream, Writable } = require('../../../rstck/reference/js/streams.js');

class Mutant extends Writable {
  destroy() {
    super.destroy();
  }
}

module.exports = { Stream, createWritable: (options) => new Mutant(options) };
