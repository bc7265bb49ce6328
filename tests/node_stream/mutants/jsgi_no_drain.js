'use strict';
// jsgi.events.3: no drain when the buffer empties.
const { JsgiStream } = require('../../../rstck/reference/js/streams.js');

class Mutant extends JsgiStream {
  emit(name, ...args) {
    return name === 'drain' ? false : super.emit(name, ...args);
  }
}

module.exports = { createJsgiStream: () => new Mutant() };
