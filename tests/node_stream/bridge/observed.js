'use strict';
// Objects for the bridge's own tests: a Node readable (whose mode a listener would change), and an emitter
// that calls back now or later.
const { EventEmitter } = require('events');
const { Readable, Writable } = require('stream');

class Caller extends EventEmitter {
  now(callback) { callback('now'); }
  onNextTick(callback) { process.nextTick(callback, 'tick'); }
  onImmediate(callback) { setImmediate(callback, 'immediate'); }
  get broken() { throw new Error('this getter throws'); }
}

module.exports = {
  createReadable: (chunks) => Readable.from(chunks),
  createWritable: (options) => new Writable({
    highWaterMark: options.highWaterMark,
    objectMode: true,
    write(chunk, encoding, callback) { setImmediate(() => { options.written(chunk); callback(); }); },
  }),
  createStream: () => new Caller(),
};
