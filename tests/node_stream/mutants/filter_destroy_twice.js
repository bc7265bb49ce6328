'use strict';
// node.filter.6: every destroy() runs again, emitting destroy each time.
const { Stream, Filter } = require('../../../rstck/reference/js/streams.js');

class Mutant extends Filter {
  destroy(callback) {
    this.destroyed = false;
    super.destroy(callback);
  }
}

module.exports = { Stream, createFilter: () => new Mutant() };
