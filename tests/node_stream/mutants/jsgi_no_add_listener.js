'use strict';
// jsgi.methods.7: no addListener() (only on()).
const { JsgiStream } = require('../../../rstck/reference/js/streams.js');

class Mutant extends JsgiStream {}
Mutant.prototype.addListener = undefined;

module.exports = { createJsgiStream: () => new Mutant() };
