'use strict';
// jsgi.methods.6: resume() emits resume, but the stream stays paused.
const { JsgiStream } = require('../../../rstck/reference/js/streams.js');

class Mutant extends JsgiStream {
  resume() {
    process.nextTick(() => this.emit('resume'));
  }
}

module.exports = { createJsgiStream: () => new Mutant() };
