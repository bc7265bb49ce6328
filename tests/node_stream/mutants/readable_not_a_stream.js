'use strict';
// node.readable.1: a readable with every method of the reference, on a plain EventEmitter: no Stream in its
// prototype chain.
const EventEmitter = require('events');
const { Stream, Readable } = require('../../../rstck/reference/js/streams.js');

const prototype = Object.create(EventEmitter.prototype);
for (const source of [Stream.prototype, Readable.prototype]) {
  for (const name of Object.getOwnPropertyNames(source)) if (name !== 'constructor') prototype[name] = source[name];
}

module.exports = {
  Stream,
  createReadable: (chunks) => Object.setPrototypeOf(new Readable(chunks), prototype),
};
