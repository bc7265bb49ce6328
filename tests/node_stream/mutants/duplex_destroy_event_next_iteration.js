'use strict';
// node.duplex.4: destroy() emits destroy on the next iteration of the event loop (setImmediate), after close.
const { Stream, Duplex } = require('../../../rstck/reference/js/streams.js');

class Mutant extends Duplex {
  emit(name, ...args) {
    if (name === 'destroy' && !this._late) {
      setImmediate(() => { this._late = true; super.emit('destroy', ...args); });
      return true;
    }
    return super.emit(name, ...args);
  }
}

module.exports = { Stream, createDuplex: () => new Mutant() };
