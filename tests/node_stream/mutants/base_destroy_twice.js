'use strict';
// node.base.11: every destroy() runs again, emitting destroy each time.
const { Stream } = require('../../../rstck/reference/js/streams.js');

class Mutant extends Stream {
  destroy(callback) {
    this.destroyed = false;
    return super.destroy(callback);
  }
}

module.exports = { Stream, createStream: () => new Mutant() };
