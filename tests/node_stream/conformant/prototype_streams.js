'use strict';
// A conformant family of streams in the older style: constructor functions and util.inherits, work deferred with
// queueMicrotask. Its writable's sink completes each chunk synchronously (the stream defers the user's callback
// itself), a second end(callback) is answered like Node's (the callback is called, with an error), 'drain' goes
// only to listeners, and the streams keep a private Symbol event for their own bookkeeping.

const EventEmitter = require('events');
const util = require('util');

const kState = Symbol('state'); // internal: announces each state change to the library's own listeners

function Stream() {
  EventEmitter.call(this);
  this.readable = false;
  this.writable = false;
  this._ended = false;
  this._destroyed = false;
}
util.inherits(Stream, EventEmitter);

Stream.prototype._state = function state(name) {
  this.emit(kState, name);
};

Stream.prototype.write = function write(chunk, callback) {
  if (this._ended) throw new Error('write after end()');
  this.emit('data', chunk);
  if (typeof callback === 'function') queueMicrotask(callback);
  return true;
};

Stream.prototype.end = function end(chunk, callback) {
  if (typeof chunk === 'function') { callback = chunk; chunk = undefined; }
  if (this._ended) throw new Error('end() called twice');
  if (chunk != null) this.write(chunk);
  this._ended = true;
  this._state('ended');
  this.emit('end');
  if (typeof callback === 'function') queueMicrotask(callback);
  return true;
};

Stream.prototype.flush = function flush(callback) {
  if (this._ended) throw new Error('flush after end()');
  if (typeof callback === 'function') queueMicrotask(callback);
  return true;
};

Stream.prototype.destroy = function destroy(callback) {
  this._state('destroy called');
  if (this._destroyed) return;
  this._destroyed = true;
  this.readable = false;
  this.writable = false;
  this.emit('destroy');
  const ended = this._ended;
  this._ended = true;
  queueMicrotask(() => {
    if (!ended) this.emit('end');
    this.emit('close');
    if (typeof callback === 'function') callback();
  });
};

Stream.prototype.pause = function pause() { this.emit('pause'); };
Stream.prototype.resume = function resume() { this.emit('resume'); };

Stream.prototype.pipe = function pipe(dest) {
  const source = this;
  function ondata(chunk) { if (dest.write(chunk) === false) source.pause(); }
  function ondrain() { source.resume(); }
  source.on('data', ondata);
  dest.on('drain', ondrain);
  source.once('end', function onend() {
    source.removeListener('data', ondata);
    dest.removeListener('drain', ondrain);
    if (dest.writable) dest.end();
  });
  dest.emit('pipe', source);
  return dest;
};

function emitDrainToListeners(stream) {
  if (stream.listenerCount('drain') > 0) stream.emit('drain');
}

// -- Readable ---------------------------------------------------------------------------------------------

function Readable(chunks) {
  Stream.call(this);
  this.readable = true;
  this._chunks = chunks.slice();
  this._paused = true; // until somebody listens for data
  this._pending = false;
  this._endEmitted = false;
  const self = this;
  this.on('newListener', function onListener(name) {
    if (name === 'data' && self._paused && !self._explicitlyPaused) { self._paused = false; self._flow(); }
  });
}
util.inherits(Readable, Stream);

Readable.prototype._flow = function flow() {
  if (this._pending) return;
  this._pending = true;
  queueMicrotask(() => {
    this._pending = false;
    while (!this._paused && !this._destroyed && this._chunks.length) this.emit('data', this._chunks.shift());
    if (!this._paused && !this._destroyed && !this._chunks.length && !this._endEmitted) {
      this._endEmitted = true;
      this.readable = false;
      this._state('ended');
      this.emit('end');
      queueMicrotask(() => this.emit('close'));
    }
  });
};

Readable.prototype.pause = function pause() {
  if (this._paused) return;
  this._paused = true;
  this._explicitlyPaused = true;
  this.emit('pause');
};

Readable.prototype.resume = function resume() {
  if (!this._paused) return;
  this._paused = false;
  this._explicitlyPaused = false;
  this.emit('resume');
  this._flow();
};

Readable.prototype.destroy = function destroy(callback) {
  this._state('destroy called');
  if (this._destroyed) return;
  this._destroyed = true;
  this.readable = false;
  this._chunks = [];
  this.emit('destroy');
  queueMicrotask(() => {
    if (!this._endEmitted) {
      this._endEmitted = true;
      this.emit('end');
    }
    this.emit('close');
    if (typeof callback === 'function') callback();
  });
};

// -- Writable ---------------------------------------------------------------------------------------------

function Writable(options) {
  Stream.call(this);
  const opts = options || {};
  this.writable = true;
  this._highWaterMark = opts.highWaterMark || 16;
  this._report = typeof opts.written === 'function' ? opts.written : function ignore() {};
  this._queue = [];
  this._scheduled = false;
  this._wantDrain = false;
  this._waiting = []; // flush and end callbacks, called once the queue is empty
  this._finished = false;
}
util.inherits(Writable, Stream);

// The sink writes each chunk at once; only the stream's own schedule makes chunks wait.
Writable.prototype._sink = function sink(chunk, done) {
  this._report(chunk);
  done();
};

Writable.prototype.write = function write(chunk, callback) {
  if (this._ended || this._destroyed) throw new Error('write after end() or destroy()');
  this._queue.push([chunk, callback]);
  this._schedule();
  if (this._queue.length >= this._highWaterMark) {
    this._wantDrain = true;
    return false;
  }
  return true;
};

Writable.prototype._schedule = function schedule() {
  if (this._scheduled) return;
  this._scheduled = true;
  setImmediate(() => {
    this._scheduled = false;
    if (this._destroyed) return;
    const [chunk, callback] = this._queue.shift();
    this._sink(chunk, () => {
      if (typeof callback === 'function') queueMicrotask(callback);
    });
    if (this._queue.length) this._schedule(); else this._emptied();
  });
};

Writable.prototype._emptied = function emptied() {
  this._state('emptied');
  if (this._wantDrain) {
    this._wantDrain = false;
    emitDrainToListeners(this);
  }
  for (const callback of this._waiting.splice(0)) queueMicrotask(callback);
  if (this._ended && !this._finished) {
    this._finished = true;
    queueMicrotask(() => this.emit('close'));
  }
};

Writable.prototype.end = function end(chunk, callback) {
  if (typeof chunk === 'function') { callback = chunk; chunk = undefined; }
  if (this._ended) {
    // As Node answers a second end(): no throw; the callback learns that the stream had ended.
    if (typeof callback === 'function') queueMicrotask(() => callback(new Error('end() after end()')));
    return !this._queue.length;
  }
  if (chunk != null) this.write(chunk);
  this._ended = true;
  this.writable = false;
  if (typeof callback === 'function') this._waiting.push(callback);
  if (this._queue.length) {
    this._wantDrain = true;
    return false;
  }
  queueMicrotask(() => this._emptied());
  return true;
};

Writable.prototype.flush = function flush(callback) {
  if (this._ended) throw new Error('flush after end()');
  if (typeof callback === 'function') {
    if (this._queue.length) this._waiting.push(callback); else queueMicrotask(callback);
  }
  return this._queue.length === 0;
};

Writable.prototype.destroy = function destroy(callback) {
  this._state('destroy called');
  if (this._destroyed) return;
  this._destroyed = true;
  this.writable = false;
  this._queue = [];
  this.emit('destroy');
  queueMicrotask(() => {
    if (!this._finished) {
      this._finished = true;
      this.emit('close');
    }
    if (typeof callback === 'function') callback();
  });
};

// -- Filter and Duplex ----------------------------------------------------------------------------------

// What is written comes out reversed, on a later microtask; pause() holds it back.
function Filter() {
  Stream.call(this);
  this.readable = true;
  this.writable = true;
  this.allowHalfOpen = true;
  this._held = [];
  this._paused = false;
  this._endEmitted = false;
}
util.inherits(Filter, Stream);

Filter.prototype._transform = function transform(chunk) {
  return typeof chunk === 'string' ? chunk.split('').reverse().join('') : chunk;
};

Filter.prototype.write = function write(chunk, callback) {
  if (this._ended || this._destroyed) throw new Error('write after end() or destroy()');
  this._held.push(this._transform(chunk));
  queueMicrotask(() => {
    this._release();
    if (typeof callback === 'function') callback();
  });
  return !this._paused;
};

Filter.prototype._release = function release() {
  while (!this._paused && !this._destroyed && this._held.length) this.emit('data', this._held.shift());
  if (!this._paused && !this._held.length) emitDrainToListeners(this);
  if (this._closesReading && this._ended && !this._held.length && !this._endEmitted && !this._destroyed) {
    this._endEmitted = true;
    this.readable = false;
    this.emit('end');
  }
};
Filter.prototype._closesReading = true;

Filter.prototype.end = function end(chunk, callback) {
  if (typeof chunk === 'function') { callback = chunk; chunk = undefined; }
  if (this._ended) throw new Error('end() called twice');
  if (chunk != null) this.write(chunk);
  this._ended = true;
  this.writable = false;
  queueMicrotask(() => {
    this._release();
    if (typeof callback === 'function') callback();
  });
  return this._held.length === 0;
};

Filter.prototype.flush = function flush(callback) {
  if (this._ended) throw new Error('flush after end()');
  if (typeof callback === 'function') queueMicrotask(callback);
  return this._held.length === 0;
};

Filter.prototype.pause = function pause() {
  if (this._paused) return;
  this._paused = true;
  this.emit('pause');
};

Filter.prototype.resume = function resume() {
  if (!this._paused) return;
  this._paused = false;
  this.emit('resume');
  queueMicrotask(() => this._release());
};

Filter.prototype.destroy = function destroy(callback) {
  this._state('destroy called');
  if (this._destroyed) return;
  this._destroyed = true;
  this.readable = false;
  this.writable = false;
  this._held = [];
  this.emit('destroy');
  if (!this._endEmitted) {
    this._endEmitted = true;
    this.emit('end');
  }
  queueMicrotask(() => {
    this.emit('close');
    if (typeof callback === 'function') callback();
  });
};

// Messages to another agent, which answers each with its length; the reading side stays open after end().
function Duplex() {
  Filter.call(this);
}
util.inherits(Duplex, Filter);
Duplex.prototype._transform = function transform(chunk) { return String(chunk).length; };
Duplex.prototype._closesReading = false;

module.exports = {
  Stream,
  createStream: () => new Stream(),
  createReadable: (chunks) => new Readable(chunks),
  createWritable: (options) => new Writable(options),
  createFilter: () => new Filter(),
  createDuplex: () => new Duplex(),
};
