'use strict';
// jsgi.events.4: pause() holds data back but emits no pause.
const { JsgiStream } = require('../../../rstck/reference/js/streams.js');

class Mutant extends JsgiStream {
  pause() {
    this._paused = true;
  }
}

module.exports = { createJsgiStream: () => new Mutant() };
