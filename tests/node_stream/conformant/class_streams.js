'use strict';
// A second conformant implementation of the stream contract, in another style than the reference: classes,
// work deferred with queueMicrotask, a writable whose writes complete on timers, a duplex without half-open
// support (its end() destroys it once flushed), and a JSGI stream that delivers on setImmediate.

const EventEmitter = require('events');

// What every end() does first: take end(callback) as well as end(chunk, callback), refuse a second end(), write
// the last chunk and mark the stream ended. Returns the callback. (A function, not a method: the streams' members
// stay those of the contract.)
function startEnd(stream, chunk, callback) {
  if (typeof chunk === 'function') [chunk, callback] = [null, chunk];
  if (stream.ended) throw new Error('end() twice');
  if (chunk != null) stream.write(chunk);
  stream.ended = true;
  return callback;
}

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
    if (callback) queueMicrotask(callback);
    return true;
  }

  end(chunk, callback) {
    callback = startEnd(this, chunk, callback);
    this.finishReading();
    if (callback) queueMicrotask(callback);
    return true;
  }

  flush(callback) {
    if (this.ended) throw new Error('flush after end()');
    if (callback) queueMicrotask(callback);
    return true;
  }

  destroy(callback) {
    if (this.destroyed) return;
    this.destroyed = true;
    this.readable = this.writable = false;
    this.emit('destroy');
    this.finishReading();
    queueMicrotask(() => {
      this.emit('close');
      if (callback) callback();
    });
  }

  pause() { this.emit('pause'); }

  resume() { this.emit('resume'); }

  pipe(dest) {
    this.on('data', (chunk) => { if (dest.write(chunk) === false) this.pause(); });
    this.on('end', () => { if (dest.writable) dest.end(); });
    for (const [event, react] of [['pause', () => this.pause()], ['resume', () => this.resume()],
      ['drain', () => this.resume()], ['destroy', () => this.destroy()],
      ['error', (err) => this.emit('error', err)]]) dest.on(event, react);
    dest.emit('pipe', this);
    return dest;
  }

  finishReading() {
    if (this.endEmitted) return;
    this.endEmitted = true;
    this.readable = false;
    this.emit('end');
  }
}

class Readable extends Stream {
  #chunks;
  #paused = true;
  #flowing = false;

  constructor(chunks) {
    super();
    this.readable = true;
    this.#chunks = [...chunks];
  }

  on(event, listener) {
    super.on(event, listener);
    if (event === 'data' && !this.started) {
      this.started = true;
      this.resume();
    }
    return this;
  }

  pause() {
    this.#paused = true;
    super.pause();
  }

  resume() {
    if (this.destroyed) return;
    this.#paused = false;
    super.resume();
    if (this.#flowing) return;
    this.#flowing = true;
    queueMicrotask(() => this.#flow());
  }

  #flow() {
    this.#flowing = false;
    while (!this.#paused && !this.destroyed && this.#chunks.length) this.emit('data', this.#chunks.shift());
    if (!this.#chunks.length && !this.destroyed && !this.endEmitted) {
      this.finishReading();
      queueMicrotask(() => this.emit('close'));
    }
  }
}
Readable.prototype.addListener = Readable.prototype.on;

class Writable extends Stream {
  #queue = [];
  #busy = false;
  #needDrain = false;
  #waiting = [];

  constructor({ highWaterMark = 16, written = () => {} } = {}) {
    super();
    this.writable = true;
    this.highWaterMark = highWaterMark;
    this.written = written;
  }

  write(chunk, callback) {
    if (this.ended || this.destroyed) throw new Error('write after end() or destroy()');
    this.#queue.push([chunk, callback]);
    this.#pump();
    this.#needDrain = this.#needDrain || this.#queue.length >= this.highWaterMark;
    return this.#queue.length < this.highWaterMark;
  }

  #pump() {
    if (this.#busy || !this.#queue.length) return;
    this.#busy = true;
    setTimeout(() => {
      this.#busy = false;
      if (this.destroyed) return;
      const [chunk, callback] = this.#queue.shift();
      this.written(chunk);
      if (callback) callback();
      if (this.#queue.length) this.#pump(); else this.#emptied();
    }, 1);
  }

  #emptied() {
    if (this.#needDrain) {
      this.#needDrain = false;
      this.emit('drain');
    }
    for (const callback of this.#waiting.splice(0)) callback();
    if (this.ended) queueMicrotask(() => this.emit('close'));
  }

  end(chunk, callback) {
    callback = startEnd(this, chunk, callback);
    this.writable = false;
    if (callback) this.#waiting.push(callback);
    if (this.#queue.length) {
      this.#needDrain = true;
      return false;
    }
    queueMicrotask(() => this.#emptied());
    return true;
  }

  flush(callback) {
    if (this.ended) throw new Error('flush after end()');
    if (callback) {
      if (this.#queue.length) this.#waiting.push(callback); else queueMicrotask(callback);
    }
    return this.#queue.length === 0;
  }

  destroy(callback) {
    this.#queue.length = 0;
    if (!this.destroyed) this.ended = true;
    super.destroy(callback);
  }

  finishReading() {} // not readable: it never emits end
}

class Filter extends Stream {
  #buffer = [];
  #paused = false;
  #scheduled = false;

  constructor() {
    super();
    this.readable = this.writable = true;
    this.allowHalfOpen = true;
  }

  write(chunk, callback) {
    if (this.ended || this.destroyed) throw new Error('write after end() or destroy()');
    this.#buffer.push(String(chunk).toUpperCase());
    this.#schedule(callback);
    return !this.#paused;
  }

  end(chunk, callback) {
    callback = startEnd(this, chunk, callback);
    this.writable = false;
    this.#schedule(callback);
    return this.#buffer.length === 0;
  }

  pause() {
    this.#paused = true;
    super.pause();
  }

  resume() {
    this.#paused = false;
    super.resume();
    this.#schedule();
  }

  #schedule(callback) {
    if (callback) this.once('flushed', callback);
    if (this.#scheduled) return;
    this.#scheduled = true;
    queueMicrotask(() => {
      this.#scheduled = false;
      while (!this.#paused && !this.destroyed && this.#buffer.length) this.emit('data', this.#buffer.shift());
      if (this.#buffer.length || this.destroyed) return;
      this.emit('flushed');
      if (this.ended) this.finishReading();
    });
  }
}

class Duplex extends Stream {
  #inFlight = 0;
  #endCallback = null;

  constructor() {
    super();
    this.readable = this.writable = true;
    this.allowHalfOpen = false; // no half-open state: end() destroys the stream once written
  }

  write(chunk, callback) {
    if (this.ended || this.destroyed) throw new Error('write after end() or destroy()');
    this.#inFlight += 1;
    setTimeout(() => {
      this.#inFlight -= 1;
      if (this.destroyed) return;
      this.emit('data', chunk);
      if (callback) callback();
      this.#settled();
    }, 1);
    return true;
  }

  end(chunk, callback) {
    callback = startEnd(this, chunk, callback);
    this.writable = false;
    this.#endCallback = callback || null;
    queueMicrotask(() => this.#settled());
    return this.#inFlight === 0;
  }

  #settled() {
    if (!this.ended || this.#inFlight || this.destroyed) return;
    if (this.#endCallback) this.#endCallback();
    this.destroy();
  }
}

class JsgiStream extends EventEmitter {
  #queue = [];
  #paused = false;
  #closed = false;
  #eofSent = false;
  #pending = false;

  write(data) {
    if (this.#closed) throw new Error('the stream is closed');
    this.#queue.push(data);
    this.#later();
  }

  close() {
    this.#closed = true;
    this.#later();
  }

  pause() {
    this.#paused = true;
    setImmediate(() => this.emit('pause'));
  }

  resume() {
    this.#paused = false;
    setImmediate(() => this.emit('resume'));
    this.#later();
  }

  #later() {
    if (this.#pending) return;
    this.#pending = true;
    setImmediate(() => {
      this.#pending = false;
      if (this.#paused) return;
      const any = this.#queue.length > 0;
      while (this.#queue.length && !this.#paused) this.emit('data', this.#queue.shift());
      if (this.#queue.length) return;
      if (any) this.emit('drain');
      if (this.#closed && !this.#eofSent) {
        this.#eofSent = true;
        this.emit('eof');
      }
    });
  }
}

module.exports = {
  Stream,
  createStream: () => new Stream(),
  createReadable: (chunks) => new Readable(chunks),
  createWritable: (options) => new Writable(options),
  createFilter: () => new Filter(),
  createDuplex: () => new Duplex(),
  createJsgiStream: () => new JsgiStream(),
};
