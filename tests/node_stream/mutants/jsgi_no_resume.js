'use strict';
// jsgi.readwrite.1: no resume(), so a paused stream can never be read again.
const { JsgiStream } = require('../../../rstck/reference/js/streams.js');

class Mutant extends JsgiStream {}
Mutant.prototype.resume = undefined;

module.exports = { createJsgiStream: () => new Mutant() };
