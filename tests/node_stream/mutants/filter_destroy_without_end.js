'use strict';
// node.filter.5: destroy() emits destroy, but no end.
const { Stream, Filter } = require('../../../rstck/reference/js/streams.js');

class Mutant extends Filter {
  destroy(callback) {
    this._endEmitted = true;
    super.destroy(callback);
  }
}

module.exports = { Stream, createFilter: () => new Mutant() };
