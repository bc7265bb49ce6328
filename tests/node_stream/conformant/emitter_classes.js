'use strict';
// A conformant family of streams written as classes on EventEmitter, in the style of libraries that keep their
// own bookkeeping on the emitter: every destroy() call, even a repeated one, announces itself under a private
// Symbol; 'drain' is emitted only while somebody listens for it (nobody else would hear it); the sink of a
// writable completes on setImmediate, and its own completion callback may come synchronously or later.

const EventEmitter = require('events');

const kDestroyRequested = Symbol('destroyRequested'); // internal: seen by the library's own listeners only
const kQueueEmptied = Symbol('queueEmptied');

class Stream extends EventEmitter {
  constructor() {
    super();
    this.readable = false;
    this.writable = false;
    this.ended = false;
    this.destroyed = false;
  }

  write(chunk, callback) {
    if (this.ended) throw new Error('write after end()');
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
    this.emit(kDestroyRequested);
    if (this.destroyed) return;
    this.destroyed = true;
    this.readable = false;
    this.writable = false;
    this.emit('destroy');
    if (!this.ended) {
      this.ended = true;
      this.emit('end');
    }
    process.nextTick(() => {
      this.emit('close');
      if (typeof callback === 'function') callback();
    });
  }

  pause() { this.emit('pause'); }

  resume() { this.emit('resume'); }

  pipe(dest) {
    const ondata = (chunk) => { if (dest.write(chunk) === false && typeof this.pause === 'function') this.pause(); };
    const ondrain = () => { if (typeof this.resume === 'function') this.resume(); };
    this.on('data', ondata);
    dest.on('drain', ondrain);
    this.once('end', () => {
      this.removeListener('data', ondata);
      dest.removeListener('drain', ondrain);
      if (dest.writable) dest.end();
    });
    dest.emit('pipe', this);
    return dest;
  }
}

// Emits 'drain' to those who listen; nobody else could act on it.
function drainListeners(emitter) {
  if (emitter.listenerCount('drain') > 0) emitter.emit('drain');
}

class Readable extends Stream {
  constructor(chunks) {
    super();
    this.readable = true;
    this.chunks = [...chunks];
    this.flowing = false;
    this.paused = false;
    this.scheduled = false;
    this.endEmitted = false;
    // Flows once somebody listens for data, as Node's readables do.
    this.on('newListener', (name) => { if (name === 'data') { this.flowing = true; this.schedule(); } });
  }

  schedule() {
    if (this.scheduled || this.destroyed) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      while (this.flowing && !this.paused && !this.destroyed && this.chunks.length) {
        this.emit('data', this.chunks.shift());
      }
      if (!this.chunks.length && !this.destroyed && !this.endEmitted) this.finish();
    });
  }

  finish() {
    this.endEmitted = true;
    this.readable = false;
    this.emit('end');
    setImmediate(() => this.emit('close'));
  }

  pause() {
    if (this.paused) return;
    this.paused = true;
    this.emit('pause');
  }

  resume() {
    if (!this.paused) return;
    this.paused = false;
    this.emit('resume');
    this.schedule();
  }

  destroy(callback) {
    this.emit(kDestroyRequested);
    if (this.destroyed) return;
    this.destroyed = true;
    this.readable = false;
    this.chunks = [];
    this.emit('destroy');
    setImmediate(() => {
      if (!this.endEmitted) {
        this.endEmitted = true;
        this.emit('end');
      }
      this.emit('close');
      if (typeof callback === 'function') callback();
    });
  }

  write() { throw new Error('not writable'); }
}

class Writable extends Stream {
  constructor(options = {}) {
    super();
    this.writable = true;
    this.highWaterMark = options.highWaterMark || 16;
    this.sink = typeof options.written === 'function' ? options.written : () => {};
    this.queue = [];
    this.busy = false;
    this.wantsDrain = false;
    this.flushCallbacks = [];
    this.endCallbacks = [];
    this.on(kQueueEmptied, () => this.emptied());
  }

  // The sink: reports the chunk written on a later turn, then says done; `done` is ours, and may be called
  // synchronously by a sink that completes at once.
  sinkWrite(chunk, done) {
    setImmediate(() => {
      this.sink(chunk);
      done();
    });
  }

  write(chunk, callback) {
    if (this.ended || this.destroyed) throw new Error('write after end() or destroy()');
    this.queue.push({ chunk, callback });
    this.pump();
    if (this.queue.length >= this.highWaterMark) {
      this.wantsDrain = true;
      return false;
    }
    return true;
  }

  pump() {
    if (this.busy || this.destroyed || !this.queue.length) return;
    this.busy = true;
    const { chunk, callback } = this.queue[0];
    let synchronous = true;
    this.sinkWrite(chunk, () => {
      const complete = () => {
        this.busy = false;
        if (this.destroyed) return;
        this.queue.shift();
        if (typeof callback === 'function') callback();
        if (this.queue.length) this.pump(); else this.emit(kQueueEmptied);
      };
      if (synchronous) process.nextTick(complete); else complete();
    });
    synchronous = false;
  }

  emptied() {
    if (this.wantsDrain) {
      this.wantsDrain = false;
      drainListeners(this);
    }
    for (const callback of this.flushCallbacks.splice(0)) callback();
    if (this.ended) this.finish();
  }

  finish() {
    for (const callback of this.endCallbacks.splice(0)) callback();
    if (!this.closed) {
      this.closed = true;
      setImmediate(() => this.emit('close'));
    }
  }

  end(chunk, callback) {
    if (typeof chunk === 'function') [chunk, callback] = [null, chunk];
    if (this.ended) throw new Error('end() called twice');
    if (chunk !== null && chunk !== undefined) this.write(chunk);
    this.ended = true;
    this.writable = false;
    if (typeof callback === 'function') this.endCallbacks.push(callback);
    if (!this.queue.length) {
      process.nextTick(() => this.finish());
      return true;
    }
    this.wantsDrain = true;
    return false;
  }

  flush(callback) {
    if (this.ended) throw new Error('flush after end()');
    const pending = this.queue.length > 0;
    if (typeof callback === 'function') {
      if (pending) this.flushCallbacks.push(callback); else process.nextTick(callback);
    }
    return !pending;
  }

  destroy(callback) {
    this.emit(kDestroyRequested);
    if (this.destroyed) return;
    this.destroyed = true;
    this.writable = false;
    this.queue = [];
    this.emit('destroy');
    setImmediate(() => {
      if (!this.closed) {
        this.closed = true;
        this.emit('close');
      }
      if (typeof callback === 'function') callback();
    });
  }

  pause() {}

  resume() {}
}

// What is written comes out as data on a later turn; pause() holds it back.
class Filter extends Stream {
  constructor() {
    super();
    this.readable = true;
    this.writable = true;
    this.allowHalfOpen = true;
    this.held = [];
    this.paused = false;
    this.endEmitted = false;
  }

  write(chunk, callback) {
    if (this.ended || this.destroyed) throw new Error('write after end() or destroy()');
    this.held.push(chunk);
    setImmediate(() => {
      this.release();
      if (typeof callback === 'function') callback();
    });
    return !this.paused;
  }

  release() {
    while (!this.paused && !this.destroyed && this.held.length) this.emit('data', this.held.shift());
    if (!this.paused && !this.held.length) drainListeners(this);
    if (this.ended && !this.held.length && !this.endEmitted && !this.destroyed) {
      this.endEmitted = true;
      this.readable = false;
      this.emit('end');
    }
  }

  end(chunk, callback) {
    if (typeof chunk === 'function') [chunk, callback] = [null, chunk];
    if (this.ended) throw new Error('end() called twice');
    if (chunk !== null && chunk !== undefined) this.write(chunk);
    this.ended = true;
    this.writable = false;
    setImmediate(() => {
      this.release();
      if (typeof callback === 'function') callback();
    });
    return this.held.length === 0;
  }

  flush(callback) {
    if (this.ended) throw new Error('flush after end()');
    if (typeof callback === 'function') setImmediate(callback);
    return this.held.length === 0;
  }

  pause() {
    if (this.paused) return;
    this.paused = true;
    this.emit('pause');
  }

  resume() {
    if (!this.paused) return;
    this.paused = false;
    this.emit('resume');
    setImmediate(() => this.release());
  }

  destroy(callback) {
    this.emit(kDestroyRequested);
    if (this.destroyed) return;
    this.destroyed = true;
    this.readable = false;
    this.writable = false;
    this.held = [];
    this.emit('destroy');
    if (!this.endEmitted) {
      this.endEmitted = true;
      this.emit('end');
    }
    setImmediate(() => {
      this.emit('close');
      if (typeof callback === 'function') callback();
    });
  }
}

// The other agent answers each chunk with its upper-case form; either side may end on its own (half open).
class Duplex extends Filter {
  release() {
    while (!this.paused && !this.destroyed && this.held.length) {
      const chunk = this.held.shift();
      this.emit('data', typeof chunk === 'string' ? chunk.toUpperCase() : chunk);
    }
    if (!this.paused && !this.held.length) drainListeners(this);
  }
}

module.exports = {
  Stream,
  createStream: () => new Stream(),
  createReadable: (chunks) => new Readable(chunks),
  createWritable: (options) => new Writable(options),
  createFilter: () => new Filter(),
  createDuplex: () => new Duplex(),
};
