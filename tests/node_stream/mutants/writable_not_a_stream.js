'use strict';
// node.writable.1: a writable with every method of the reference, on a plain EventEmitter: no Stream in its
// prototype chain.
const EventEmitter = require('events');
const { Stream, Writable } = require('../../../rstck/reference/js/streams.js');

const prototype = Object.create(EventEmitter.prototype);
for (const source of [Stream.prototype, Writable.prototype]) {
  for (const name of Object.getOwnPropertyNames(source)) if (name !== 'constructor') prototype[name] = source[name];
}

module.exports = {
  Stream,
  createWritable: (options) => Object.setPrototypeOf(new Writable(options), prototype),
};
