'use strict';
// node.writable.19: no flush().
const { Stream, Writable } = require('../../../rstck/reference/js/streams.js');

class Mutant extends Writable {}
Mutant.prototype.flush = undefined;

module.exports = { Stream, createWritable: (options) => new Mutant(options) };
