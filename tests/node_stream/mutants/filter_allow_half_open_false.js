'use strict';
// node.filter.2: allowHalfOpen is false.
const { Stream, Filter } = require('../../../rstck/reference/js/streams.js');

class Mutant extends Filter {
  constructor() {
    super();
    this.allowHalfOpen = false;
  }
}

module.exports = { Stream, createFilter: () => new Mutant() };
