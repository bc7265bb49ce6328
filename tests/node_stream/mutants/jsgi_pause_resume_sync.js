'use strict';
// jsgi.timing.1: pause and resume are emitted inside pause() and resume() (data, eof and drain are deferred).
const { JsgiStream } = require('../../../rstck/reference/js/streams.js');

class Mutant extends JsgiStream {
  pause() {
    this._paused = true;
    this.emit('pause');
  }

  resume() {
    this._paused = false;
    this.emit('resume');
    this._schedule();
  }
}

module.exports = { createJsgiStream: () => new Mutant() };
