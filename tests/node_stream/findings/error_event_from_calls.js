'use strict';
// Streams that report trouble the way older emitters do: by emitting 'error' synchronously, inside the call.
// Nobody listens for 'error' (the kit adds no listener), so EventEmitter throws the error out of that call: the
// call itself throws nothing.
//   createStream()    write() after end() emits 'error' instead of throwing (node.base.2 wants a throw)
//   createWritable()  destroy(err, callback), Node's signature: destroy(cb) takes cb for the error and emits it
//                     at once, so cb is never called (node.writable.17) and never called early (node.writable.18)

const EventEmitter = require('events');

class Stream extends EventEmitter {
  constructor() {
    super();
    this.ended = false;
    this.destroyed = false;
  }

  write(chunk, callback) {
    if (this.ended) {
      this.emit('error', new Error('write after end()'));
      return false;
    }
    this.emit('data', chunk);
    if (typeof callback === 'function') process.nextTick(callback);
    return true;
  }

  end(chunk, callback) {
    if (typeof chunk === 'function') [chunk, callback] = [null, chunk];
    if (this.ended) throw new Error('end() called twice');
    if (chunk !== null && chunk !== undefined) this.write(chunk);
    this.ended = true;
    this.emit('end');
    if (typeof callback === 'function') process.nextTick(callback);
    return true;
  }

  flush(callback) {
    if (this.ended) throw new Error('flush after end()');
    if (typeof callback === 'function') process.nextTick(callback);
    return true;
  }

  destroy(callback) {
    if (this.destroyed) return;
    this.destroyed = true;
    this.emit('destroy');
    this.emit('end');
    if (typeof callback === 'function') process.nextTick(callback);
  }

  pipe(dest) {
    this.on('data', (chunk) => dest.write(chunk));
    this.on('end', () => dest.end());
    return dest;
  }
}

class Writable extends EventEmitter {
  constructor(options = {}) {
    super();
    this.writable = true;
    this.written = typeof options.written === 'function' ? options.written : () => {};
  }

  write(chunk, callback) {
    if (!this.writable) throw new Error('write after end() or destroy()');
    setImmediate(() => {
      this.written(chunk);
      if (typeof callback === 'function') callback();
    });
    return true;
  }

  end(chunk, callback) {
    if (typeof chunk === 'function') [chunk, callback] = [null, chunk];
    if (chunk !== null && chunk !== undefined) this.write(chunk);
    this.writable = false;
    if (typeof callback === 'function') setImmediate(() => setImmediate(callback));
    return true;
  }

  destroy(err, callback) {
    if (this.destroyed) return;
    this.destroyed = true;
    this.writable = false;
    this.emit('destroy');
    if (err) this.emit('error', err);
    setImmediate(() => {
      this.emit('close');
      if (typeof callback === 'function') callback();
    });
  }
}

module.exports = {
  Stream,
  createStream: () => new Stream(),
  createWritable: (options) => new Writable(options),
};
