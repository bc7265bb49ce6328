'use strict';
// node.duplex.5: destroy(callback) never calls its callback.
const { Stream, Duplex } = require('../../../rstck/reference/js/streams.js');

class Mutant extends Duplex {
  destroy() {
    super.destroy();
  }
}

module.exports = { Stream, createDuplex: () => new Mutant() };
