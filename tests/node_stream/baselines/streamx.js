'use strict';
// streamx (an iteration of Node's streams, on npm) as a node-stream target, built as its users build streams:
// tests/node_stream/test_baselines.py. Its writes take no callback, its end() takes a chunk or a callback, and
// its writable emits 'drain' only while somebody listens for it.
const { Duplex, PassThrough, Readable, Stream, Writable } = require('streamx');

module.exports = {
  createStream: () => new Stream(),

  createReadable(chunks) {
    let next = 0;
    return new Readable({
      read(cb) {
        this.push(next < chunks.length ? chunks[next++] : null);
        cb(null);
      },
    });
  },

  // A sink that completes each write on a later turn; byteLength 1 counts the high-water mark in chunks.
  createWritable(options = {}) {
    const { highWaterMark, written } = options;
    return new Writable({
      highWaterMark,
      byteLength: () => 1,
      write(data, cb) {
        setImmediate(() => {
          if (typeof written === 'function') written(data);
          cb(null);
        });
      },
    });
  },

  createFilter: () => new PassThrough(),

  // The other agent echoes each chunk written, on a later turn.
  createDuplex() {
    return new Duplex({
      write(data, cb) {
        setImmediate(() => {
          this.push(data);
          cb(null);
        });
      },
    });
  },
};
