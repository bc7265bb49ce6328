'use strict';
// rstck's reference Node streams: the 2011 stream contract (specs/node-stream-contract.txt) and the JSGI
// evented stream (specs/jsgi-stream-extension.txt). CommonJS, no npm dependency; prototype functions, work
// deferred with process.nextTick and writes completed on setImmediate.
//
//   rstck check node-stream:rstck/reference/js/streams.js

const EventEmitter = require('events');
const util = require('util');

const DEFAULT_HIGH_WATER_MARK = 16;

// -- the Stream base class ---------------------------------------------------------------------------

function Stream() {
  EventEmitter.call(this);
  this.writable = false;
  this.readable = false;
  this.ended = false;
  this.destroyed = false;
}
util.inherits(Stream, EventEmitter);

Stream.prototype.write = function write(chunk, callback) {
  if (this.ended) throw new Error('write after end()');
  this.emit('data', chunk);
  if (typeof callback === 'function') process.nextTick(callback);
  return true;
};

Stream.prototype.end = function end(chunk, callback) {
  if (typeof chunk === 'function') { callback = chunk; chunk = null; }
  if (this.ended) throw new Error('end() called twice');
  if (chunk !== null && chunk !== undefined) this.write(chunk);
  this.ended = true;
  this._emitEnd();
  if (typeof callback === 'function') process.nextTick(callback);
  return true;
};

Stream.prototype.flush = function flush(callback) {
  if (this.ended) throw new Error('flush after end()');
  if (typeof callback === 'function') process.nextTick(callback);
  return true;
};

Stream.prototype.destroy = function destroy(callback) {
  if (this.destroyed) return;
  this.destroyed = true;
  this.readable = false;
  this.writable = false;
  this.emit('destroy');
  this._emitEnd();
  process.nextTick(() => {
    this._emitClose();
    if (typeof callback === 'function') callback();
  });
};

Stream.prototype.pause = function pause() { this.emit('pause'); };
Stream.prototype.resume = function resume() { this.emit('resume'); };

Stream.prototype.pipe = function pipe(dest) {
  const src = this;
  src.on('data', (chunk) => { if (dest.write(chunk) === false) src.pause(); });
  src.on('end', () => { if (dest.writable) dest.end(); });
  dest.on('pause', () => src.pause());
  dest.on('resume', () => src.resume());
  dest.on('drain', () => src.resume());
  dest.on('destroy', () => src.destroy());
  dest.on('error', (err) => src.emit('error', err));
  dest.emit('pipe', src);
  return dest;
};

Stream.prototype._emitEnd = function emitEnd() {
  if (this._endEmitted) return;
  this._endEmitted = true;
  this.readable = false;
  this.emit('end');
};

Stream.prototype._emitClose = function emitClose() {
  if (this._closeEmitted) return;
  this._closeEmitted = true;
  this.emit('close');
};

// -- Readable: emits its chunks once something listens for data or resume() is called ---------------

function Readable(chunks) {
  Stream.call(this);
  this.readable = true;
  this._chunks = Array.from(chunks || []);
  this._paused = true;
  this._scheduled = false;
}
util.inherits(Readable, Stream);

Readable.prototype.on = function on(event, listener) {
  Stream.prototype.on.call(this, event, listener);
  if (event === 'data' && !this._started) {
    this._started = true;
    this.resume();
  }
  return this;
};
Readable.prototype.addListener = Readable.prototype.on;

Readable.prototype.pause = function pause() {
  this._paused = true;
  this.emit('pause');
};

Readable.prototype.resume = function resume() {
  if (this.destroyed) return;
  this._paused = false;
  this.emit('resume');
  this._schedule();
};

Readable.prototype._schedule = function schedule() {
  if (this._scheduled) return;
  this._scheduled = true;
  process.nextTick(() => {
    this._scheduled = false;
    while (!this._paused && !this.destroyed && this._chunks.length) this.emit('data', this._chunks.shift());
    if (!this._chunks.length && !this.destroyed) {
      this._emitEnd();
      process.nextTick(() => this._emitClose());
    }
  });
};

// -- Writable: a queue of chunks, each written on a turn of its own ----------------------------------

function Writable(options) {
  Stream.call(this);
  const opts = options || {};
  this.writable = true;
  this._highWaterMark = opts.highWaterMark || DEFAULT_HIGH_WATER_MARK;
  this._sink = typeof opts.written === 'function' ? opts.written : () => {};
  this._queue = [];
  this._writing = false;
  this._needDrain = false;
  this._flushCallbacks = [];
  this._endCallbacks = [];
}
util.inherits(Writable, Stream);

Writable.prototype.write = function write(chunk, callback) {
  if (this.ended || this.destroyed) throw new Error('write after end() or destroy()');
  this._queue.push({ chunk, callback });
  this._next();
  if (this._queue.length >= this._highWaterMark) {
    this._needDrain = true;
    return false;
  }
  return true;
};

Writable.prototype._next = function next() {
  if (this._writing || !this._queue.length || this.destroyed) return;
  this._writing = true;
  setImmediate(() => {
    this._writing = false;
    if (this.destroyed) return;
    const { chunk, callback } = this._queue.shift();
    this._sink(chunk);
    if (typeof callback === 'function') callback();
    if (this._queue.length) this._next(); else this._emptied();
  });
};

Writable.prototype._emptied = function emptied() {
  if (this._needDrain) {
    this._needDrain = false;
    this.emit('drain');
  }
  for (const callback of this._flushCallbacks.splice(0)) callback();
  if (this.ended) this._finish();
};

Writable.prototype._finish = function finish() {
  for (const callback of this._endCallbacks.splice(0)) callback();
  process.nextTick(() => this._emitClose());
};

Writable.prototype.end = function end(chunk, callback) {
  if (typeof chunk === 'function') { callback = chunk; chunk = null; }
  if (this.ended) throw new Error('end() called twice');
  if (chunk !== null && chunk !== undefined) this.write(chunk);
  this.ended = true;
  this.writable = false;
  if (typeof callback === 'function') this._endCallbacks.push(callback);
  if (!this._queue.length) {
    process.nextTick(() => this._finish());
    return true;
  }
  this._needDrain = true; // end() returns false: drain follows once the queue is empty
  return false;
};

Writable.prototype.flush = function flush(callback) {
  if (this.ended) throw new Error('flush after end()');
  const pending = this._queue.length > 0;
  if (typeof callback === 'function') {
    if (pending) this._flushCallbacks.push(callback); else process.nextTick(callback);
  }
  return !pending;
};

Writable.prototype.destroy = function destroy(callback) {
  if (this.destroyed) return;
  this.destroyed = true;
  this.writable = false;
  this._queue = [];
  this.emit('destroy');
  process.nextTick(() => {
    this._emitClose();
    if (typeof callback === 'function') callback();
  });
};

// -- Filter: what is written comes out as data, on a later tick --------------------------------------

function Filter(transform) {
  Stream.call(this);
  this.readable = true;
  this.writable = true;
  this.allowHalfOpen = true;
  this._transform = typeof transform === 'function' ? transform : (chunk) => chunk;
  this._buffer = [];
  this._callbacks = [];
  this._paused = false;
  this._scheduled = false;
  this._needDrain = false;
}
util.inherits(Filter, Stream);

Filter.prototype.write = function write(chunk, callback) {
  if (this.ended || this.destroyed) throw new Error('write after end() or destroy()');
  this._buffer.push(this._transform(chunk));
  if (typeof callback === 'function') this._callbacks.push(callback);
  this._schedule();
  if (this._paused) {
    this._needDrain = true;
    return false;
  }
  return true;
};

Filter.prototype.end = function end(chunk, callback) {
  if (typeof chunk === 'function') { callback = chunk; chunk = null; }
  if (this.ended) throw new Error('end() called twice');
  if (chunk !== null && chunk !== undefined) this.write(chunk);
  this.ended = true;
  this.writable = false;
  if (typeof callback === 'function') this._callbacks.push(callback);
  this._schedule();
  return this._buffer.length === 0;
};

Filter.prototype.flush = function flush(callback) {
  if (this.ended) throw new Error('flush after end()');
  if (typeof callback === 'function') this._callbacks.push(callback);
  this._schedule();
  return this._buffer.length === 0;
};

// Paused the same way as a readable: a flag its _schedule() honours, and the pause event.
Filter.prototype.pause = Readable.prototype.pause;

Filter.prototype.resume = function resume() {
  this._paused = false;
  this.emit('resume');
  this._schedule();
};

Filter.prototype._schedule = function schedule() {
  if (this._scheduled) return;
  this._scheduled = true;
  process.nextTick(() => {
    this._scheduled = false;
    while (!this._paused && !this.destroyed && this._buffer.length) this.emit('data', this._buffer.shift());
    if (this._buffer.length || this.destroyed) return;
    if (this._needDrain) {
      this._needDrain = false;
      this.emit('drain');
    }
    for (const callback of this._callbacks.splice(0)) callback();
    if (this.ended) {
      this._emitEnd();
      process.nextTick(() => this._emitClose());
    }
  });
};

// -- Duplex: talks to an agent that echoes what is written -------------------------------------------

function Duplex(options) {
  Stream.call(this);
  this.readable = true;
  this.writable = true;
  this.allowHalfOpen = !(options && options.allowHalfOpen === false);
  this._pending = 0;
}
util.inherits(Duplex, Stream);

Duplex.prototype.write = function write(chunk, callback) {
  if (this.ended || this.destroyed) throw new Error('write after end() or destroy()');
  this._pending += 1;
  setImmediate(() => { // the agent answers on a later turn
    this._pending -= 1;
    if (this.destroyed) return;
    if (typeof callback === 'function') callback();
    this.emit('data', chunk);
    if (this._pending === 0) this._flushed();
  });
  return true;
};

Duplex.prototype.end = function end(chunk, callback) {
  if (typeof chunk === 'function') { callback = chunk; chunk = null; }
  if (this.ended) throw new Error('end() called twice');
  if (chunk !== null && chunk !== undefined) this.write(chunk);
  this.ended = true;
  this.writable = false;
  this._endCallback = callback;
  if (this._pending === 0) process.nextTick(() => this._flushed());
  return this._pending === 0;
};

Duplex.prototype._flushed = function flushed() {
  if (!this.ended || this.destroyed) return;
  const callback = this._endCallback;
  this._endCallback = null;
  if (typeof callback === 'function') callback();
  if (!this.allowHalfOpen) this.destroy(); // not half open: the write side's end shuts the stream
};

Duplex.prototype.flush = function flush(callback) {
  if (this.ended) throw new Error('flush after end()');
  if (typeof callback === 'function') process.nextTick(callback);
  return this._pending === 0;
};

Duplex.prototype.close = function close(chunk, callback) {
  if (typeof chunk === 'function') { callback = chunk; chunk = null; }
  this.end(chunk, () => this.destroy(callback));
};

// -- the JSGI stream: an event queue, every event on a later tick -------------------------------------

function JsgiStream() {
  EventEmitter.call(this);
  this._queue = [];
  this._paused = false;
  this._closed = false;
  this._eof = false;
  this._scheduled = false;
}
util.inherits(JsgiStream, EventEmitter);

JsgiStream.prototype.write = function write(data) {
  if (this._closed) throw new Error('write to a closed stream');
  this._queue.push(data);
  this._schedule();
  return true;
};

JsgiStream.prototype.close = function close() {
  this._closed = true;
  this._schedule();
};

JsgiStream.prototype.pause = function pause() {
  this._paused = true;
  process.nextTick(() => this.emit('pause'));
};

JsgiStream.prototype.resume = function resume() {
  this._paused = false;
  process.nextTick(() => this.emit('resume'));
  this._schedule();
};

JsgiStream.prototype._schedule = function schedule() {
  if (this._scheduled) return;
  this._scheduled = true;
  process.nextTick(() => {
    this._scheduled = false;
    if (this._paused) return;
    const delivered = this._queue.length > 0;
    while (!this._paused && this._queue.length) this.emit('data', this._queue.shift());
    if (this._queue.length) return;
    if (delivered) this.emit('drain');
    if (this._closed && !this._eof) {
      this._eof = true;
      this.emit('eof');
    }
  });
};

module.exports = {
  Stream,
  Readable,
  Writable,
  Filter,
  Duplex,
  JsgiStream,
  createStream: () => new Stream(),
  createReadable: (chunks) => new Readable(chunks),
  createWritable: (options) => new Writable(options),
  createFilter: () => new Filter(),
  createDuplex: () => new Duplex(),
  createJsgiStream: () => new JsgiStream(),
};
