'use strict';
// node.filter.4: resume() lets the data flow but emits no resume.
const { Stream, Filter } = require('../../../rstck/reference/js/streams.js');

class Mutant extends Filter {
  resume() {
    this._paused = false;
    this._schedule();
  }
}

module.exports = { Stream, createFilter: () => new Mutant() };
