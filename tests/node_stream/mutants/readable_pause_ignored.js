'use strict';
// node.readable.5: pause() emits pause and lets the data flow on.
const { Stream, Readable } = require('../../../rstck/reference/js/streams.js');

class Mutant extends Readable {
  pause() {
    this.emit('pause');
  }
}

module.exports = { Stream, createReadable: (chunks) => new Mutant(chunks) };
