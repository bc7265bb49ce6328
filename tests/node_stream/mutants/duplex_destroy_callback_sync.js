'use strict';
// node.duplex.6: destroy(callback) calls its callback before it returns.
const { Stream, Duplex } = require('../../../rstck/reference/js/streams.js');

class Mutant extends Duplex {
  destroy(callback) {
    super.destroy();
    if (typeof callback === 'function') callback();
  }
}

module.exports = { Stream, createDuplex: () => new Mutant() };
