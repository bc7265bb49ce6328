'use strict';
// jsgi.events.5: resume() lets data through but emits no resume.
const { JsgiStream } = require('../../../rstck/reference/js/streams.js');

class Mutant extends JsgiStream {
  resume() {
    this._paused = false;
    this._schedule();
  }
}

module.exports = { createJsgiStream: () => new Mutant() };
