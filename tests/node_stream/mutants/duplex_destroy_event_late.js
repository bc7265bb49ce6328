'use strict';
// node.duplex.4: destroy() emits destroy a quarter of a second later, not immediately.
const { Stream, Duplex } = require('../../../rstck/reference/js/streams.js');

class Mutant extends Duplex {
  emit(name, ...args) {
    if (name === 'destroy' && !this._late) {
      setTimeout(() => { this._late = true; super.emit('destroy', ...args); }, 250);
      return true;
    }
    return super.emit(name, ...args);
  }
}

module.exports = { Stream, createDuplex: () => new Mutant() };
