'use strict';
// jsgi.methods.5, jsgi.methods.6: pause() emits pause and lets data flow on.
const { JsgiStream } = require('../../../rstck/reference/js/streams.js');

class Mutant extends JsgiStream {
  pause() {
    process.nextTick(() => this.emit('pause'));
  }
}

module.exports = { createJsgiStream: () => new Mutant() };
