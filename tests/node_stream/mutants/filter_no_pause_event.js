'use strict';
// node.filter.3: pause() halts the data but emits no pause.
const { Stream, Filter } = require('../../../rstck/reference/js/streams.js');

class Mutant extends Filter {
  pause() {
    this._paused = true;
  }
}

module.exports = { Stream, createFilter: () => new Mutant() };
