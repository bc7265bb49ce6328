'use strict';
// jsgi.events.1, jsgi.methods.3: data events carry the data wrapped in an object, not the data written.
const { JsgiStream } = require('../../../rstck/reference/js/streams.js');

class Mutant extends JsgiStream {
  emit(name, ...args) {
    if (name === 'data') return super.emit(name, { data: args[0] });
    return super.emit(name, ...args);
  }
}

module.exports = { createJsgiStream: () => new Mutant() };
