'use strict';
// node.filter.1, node.filter.2: no allowHalfOpen flag.
const { Stream, Filter } = require('../../../rstck/reference/js/streams.js');

class Mutant extends Filter {
  constructor() {
    super();
    delete this.allowHalfOpen;
  }
}

module.exports = { Stream, createFilter: () => new Mutant() };
