'use strict';
// node.duplex.7: every destroy() runs again, emitting destroy each time.
const { Stream, Duplex } = require('../../../rstck/reference/js/streams.js');

class Mutant extends Duplex {
  destroy(callback) {
    this.destroyed = false;
    super.destroy(callback);
  }
}

module.exports = { Stream, createDuplex: () => new Mutant() };
