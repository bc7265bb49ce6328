'use strict';
// node.readable.2: no pipe().
const { Stream, Readable } = require('../../../rstck/reference/js/streams.js');

class Mutant extends Readable {}
Mutant.prototype.pipe = undefined;

module.exports = { Stream, createReadable: (chunks) => new Mutant(chunks) };
