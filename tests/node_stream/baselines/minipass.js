'use strict';
// minipass (a minimal PassThrough stream, on npm) as a node-stream target: tests/node_stream/test_baselines.py.
// A Minipass is readable and writable at once: the readable holds its chunks until it is read, the filter is a
// fresh one. It keeps its own bookkeeping on the emitter under private Symbols (destroy() emits one each time).
const { Minipass } = require('minipass');

module.exports = {
  createReadable(chunks) {
    const stream = new Minipass({ objectMode: true });
    for (const chunk of chunks) stream.write(chunk);
    stream.end();
    return stream;
  },

  createFilter: () => new Minipass({ objectMode: true }),
};
