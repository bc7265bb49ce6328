'use strict';
// The Node side of rstck's JavaScript bridge (docs/node.md). CommonJS, no npm dependency.
//
//   node driver.js MODULE
//
// Commands arrive as NDJSON on stdin (create, call, await_idle, reset; for Node streams also get, inspect
// and listen). Events and replies leave as
// NDJSON on the file descriptor RSTCK_EVENTS_FD, written with fs.writeSync: in order, on disk before a
// crash, never mixed with what the implementation prints (console.* becomes `console` events; raw
// stdout/stderr stay untouched).
//
// The kit's objects (its probe subscribers, the subscriptions it hands to a subscriber under test)
// live in Python. When JavaScript calls one, the driver emits an `ask` and blocks reading
// RSTCK_NESTED_FD until the kit answers; commands the kit makes meanwhile (a request from inside
// onNext) arrive on that descriptor and run right there, nested, as they would in one process.

const fs = require('fs');
const path = require('path');
const util = require('util');
const { StringDecoder } = require('string_decoder');

const EVENTS_FD = Number(process.env.RSTCK_EVENTS_FD);
const NESTED_FD = Number(process.env.RSTCK_NESTED_FD);
const MODULE = process.argv[2];

// The driver's own timers, taken before the implementation can replace the globals.
const setImmediateOwn = setImmediate;
const setTimeoutOwn = setTimeout;
const hrtime = process.hrtime.bigint;
const activeResources = typeof process.getActiveResourcesInfo === 'function'
  ? process.getActiveResourcesInfo.bind(process) : null;
const realExit = process.exit.bind(process);

let gc; // the full collector, made on first use (3.13) and kept off globalThis: the implementation does not see it
function collector() {
  if (gc === undefined) {
    try {
      require('v8').setFlagsFromString('--expose-gc');
      gc = require('vm').runInNewContext('gc');
    } catch (err) {
      gc = null;
    }
  }
  return gc;
}

// -- the event channel ---------------------------------------------------------------------------

let seq = 0;
let turn = 0;
let depth = 0; // how deeply the kit's objects are being called (asks in progress)
let batchCall = null; // the index of the call under way in a `batch` command
const ops = []; // the commands in progress, innermost last

function write(line) {
  const data = Buffer.from(line + '\n', 'utf8');
  let offset = 0;
  while (offset < data.length) {
    try {
      offset += fs.writeSync(EVENTS_FD, data, offset, data.length - offset);
    } catch (err) {
      if (err.code === 'EAGAIN') continue;
      realExit(70); // the kit is gone: nobody is left to report to
    }
  }
}

function emit(event) {
  seq += 1;
  event.seq = seq;
  event.t = hrtime().toString();
  event.turn = turn;
  if (!('in_op' in event)) event.in_op = ops.length ? ops[ops.length - 1] : null;
  if (batchCall !== null && event.in_op === ops[ops.length - 1]) event.call = batchCall;
  event.depth = depth;
  write(JSON.stringify(event));
}

function reply(id, fields) {
  seq += 1;
  write(JSON.stringify(Object.assign({ re: id, seq, turn }, fields)));
}

// -- values across the bridge ----------------------------------------------------------------------

const handles = new Map(); // handle -> object the kit holds (publishers, subscribers, subscriptions)
const handleOf = new WeakMap();
let handleCount = 0;
const kitObjects = new Map(); // kit id -> WeakRef of the JavaScript stand-in of a kit object
const kitIdOf = new WeakMap(); // stand-in (or an error the kit sent) -> kit id
const ROLE_METHODS = ['subscribe', 'onSubscribe', 'onNext', 'onError', 'onComplete', 'request', 'cancel'];

function className(value) {
  try {
    const ctor = value && value.constructor;
    return (ctor && typeof ctor.name === 'string' && ctor.name) || 'Object';
  } catch (err) {
    return 'Object';
  }
}

function register(obj) {
  let handle = handleOf.get(obj);
  if (handle === undefined) {
    handleCount += 1;
    handle = 'h' + handleCount;
    handleOf.set(obj, handle);
  }
  handles.set(handle, obj);
  const methods = ROLE_METHODS.filter((m) => {
    try { return typeof obj[m] === 'function'; } catch (err) { return false; }
  });
  return { $ref: handle, class: className(obj), methods };
}

function isObject(value) {
  return value !== null && (typeof value === 'object' || typeof value === 'function');
}

function isError(value) {
  return value instanceof Error || (value !== null && typeof value === 'object' &&
    Object.prototype.toString.call(value) === '[object Error]');
}

function errorChain(err) {
  const names = [];
  try {
    if (typeof err.name === 'string' && err.name) names.push(err.name);
    for (let proto = Object.getPrototypeOf(err); proto && proto !== Object.prototype;
      proto = Object.getPrototypeOf(proto)) {
      const name = proto.constructor && proto.constructor.name;
      if (name && !names.includes(name)) names.push(name);
    }
  } catch (e) { /* a hostile getter: the names found so far */ }
  return names.length ? names : ['Error'];
}

function encodeError(err) {
  const kit = kitIdOf.get(err);
  if (kit !== undefined) return { $kit: kit };
  const out = { $error: 'Error', message: '', chain: ['Error'] };
  try {
    out.chain = errorChain(err);
    out.$error = out.chain[0];
    out.message = String(err.message);
    if (typeof err.stack === 'string') out.stack = err.stack.split('\n').slice(0, 12).join('\n');
    if (err.code !== undefined) out.code = String(err.code);
  } catch (e) { /* keep what was read */ }
  return out;
}

function encode(value, level = 0) {
  switch (typeof value) {
    case 'undefined': return { $undefined: true };
    case 'boolean': case 'string': return value;
    case 'number':
      if (Number.isFinite(value)) return value;
      return { $number: String(value) };
    case 'bigint': return { $bigint: value.toString() };
    case 'symbol': return { $object: 'Symbol', text: value.toString() };
    case 'function': {
      const kit = kitIdOf.get(value);
      return kit !== undefined ? { $kit: kit } : { $object: 'Function', text: value.name || '' };
    }
    default: break;
  }
  if (value === null) return null;
  const kit = kitIdOf.get(value);
  if (kit !== undefined) return { $kit: kit };
  if (isError(value)) return encodeError(value);
  const known = handleOf.get(value);
  if (known !== undefined) return { $ref: known, class: className(value) };
  if (Buffer.isBuffer(value) || value instanceof Uint8Array) {
    return { $b64: Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('base64') };
  }
  if (level > 6) return { $object: className(value) };
  if (Array.isArray(value)) return value.slice(0, 1000).map((v) => encode(v, level + 1));
  const proto = Object.getPrototypeOf(value);
  if (proto === Object.prototype || proto === null) {
    const out = {};
    for (const key of Object.keys(value).slice(0, 100)) out[key] = encode(value[key], level + 1);
    if (Object.keys(out).some((k) => k.startsWith('$'))) return { $object: 'Object' };
    return out;
  }
  return { $object: className(value) };
}

const BUILTIN_ERRORS = { Error, TypeError, RangeError, SyntaxError, ReferenceError, EvalError, URIError };

function decode(value) {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(decode);
  if ('$undefined' in value) return undefined;
  if ('$number' in value) return Number(value.$number);
  if ('$bigint' in value) return value.as === 'number' ? Number(BigInt(value.$bigint)) : BigInt(value.$bigint);
  if ('$b64' in value) return Buffer.from(value.$b64, 'base64');
  if ('$ref' in value) {
    if (!handles.has(value.$ref)) throw new Error(`rstck driver: unknown handle ${value.$ref}`);
    return handles.get(value.$ref);
  }
  if ('$kit' in value) return kitObject(value.$kit, value.role, value);
  if ('$callback' in value) return kitCallback(value.$callback);
  if ('$error' in value) return kitError(value);
  if ('$object' in value) return {};
  const out = {};
  for (const key of Object.keys(value)) out[key] = decode(value[key]);
  return out;
}

// The JavaScript stand-ins of the kit's objects: each method asks the kit, synchronously.
const KIT_METHODS = {
  subscriber: ['onSubscribe', 'onNext', 'onError', 'onComplete'],
  subscription: ['request', 'cancel'],
  publisher: ['subscribe'],
  observer: ['onSubscribeProcessed', 'onNextProcessed', 'onErrorProcessed', 'onCompleteProcessed'],
};

function kitObject(id, role, spec) {
  const ref = kitObjects.get(id);
  const alive = ref && ref.deref();
  if (alive !== undefined) return alive;
  let made;
  if (role === 'error') {
    const Ctor = BUILTIN_ERRORS[spec.name] || Error;
    made = new Ctor(String(spec.message));
    if (!(spec.name in BUILTIN_ERRORS)) made.name = spec.name;
  } else {
    made = new KitObject(spec.label || id);
    for (const name of KIT_METHODS[role] || []) {
      Object.defineProperty(made, name, {
        value: function kitMethod(...args) { return ask(id, name, args); },
        enumerable: false,
      });
    }
  }
  kitObjects.set(id, new WeakRef(made));
  kitIdOf.set(made, id);
  return made;
}

class KitObject {
  constructor(label) {
    Object.defineProperty(this, 'rstck', { value: label, enumerable: false });
  }
}

// -- asking the kit ------------------------------------------------------------------------------

let askCount = 0;
const nestedDecoder = new StringDecoder('utf8');
let nestedBuffer = '';
const nestedChunk = Buffer.allocUnsafe(65536);
const pause = new Int32Array(new SharedArrayBuffer(4));

function readNested() {
  for (;;) {
    const end = nestedBuffer.indexOf('\n');
    if (end >= 0) {
      const line = nestedBuffer.slice(0, end);
      nestedBuffer = nestedBuffer.slice(end + 1);
      return JSON.parse(line);
    }
    let n;
    try {
      n = fs.readSync(NESTED_FD, nestedChunk, 0, nestedChunk.length, null);
    } catch (err) {
      if (err.code === 'EAGAIN') { Atomics.wait(pause, 0, 0, 1); continue; }
      throw err;
    }
    if (n === 0) realExit(70); // the kit is gone
    nestedBuffer += nestedDecoder.write(nestedChunk.subarray(0, n));
  }
}

function ask(kit, name, args) {
  askCount += 1;
  const id = askCount;
  const encoded = name === 'onSubscribe'
    ? args.map((a) => (a !== null && typeof a === 'object' ? register(a) : encode(a)))
    : args.map((a) => encode(a));
  emit({ ev: 'ask', ask: id, obj: kit, name, args: encoded });
  depth += 1;
  try {
    for (;;) {
      const message = readNested();
      if (message.op === 'answer') {
        if (message.ask !== id) throw new Error(`rstck driver: answer to ask ${message.ask}, expected ${id}`);
        if (message.abort_idle) abortIdle();
        if (message.thrown !== undefined) throw decode(message.thrown);
        return undefined;
      }
      dispatch(message);
    }
  } finally {
    depth -= 1;
  }
}

// -- commands ------------------------------------------------------------------------------------

let loaded = null; // the implementation's exports
let loadedBy = 'require';

function lookup(dotted) {
  let value = loaded;
  for (const part of String(dotted).split('.')) {
    if (value === null || value === undefined) return undefined;
    value = value[part];
  }
  return value;
}

function dispatch(command) {
  if (command.release) for (const handle of command.release) handles.delete(handle);
  const id = command.id;
  ops.push(id);
  try {
    switch (command.op) {
      case 'create': return create(command);
      case 'call': return call(command);
      case 'await_idle': return awaitIdle(command);
      case 'reset': return reset(command);
      case 'get': return get(command);
      case 'inspect': return inspect(command);
      case 'listen': return listen(command);
      case 'batch': return batch(command);
      default: throw new Error(`rstck driver: unknown op ${command.op}`);
    }
  } catch (err) {
    return reply(id, { ok: false, thrown: encode(err) });
  } finally {
    ops.pop();
  }
}

function create(command) {
  const factory = lookup(command.factory);
  if (typeof factory !== 'function') {
    return reply(command.id, { ok: false, missing: true });
  }
  const made = factory(...command.args.map(decode));
  if (command.watch && made !== null && typeof made === 'object') watched.set(made, register(made).$ref);
  if (made !== null && typeof made === 'object' && typeof made.then === 'function') {
    // An async factory: the reply waits for its promise.
    made.then((value) => {
      ops.push(command.id);
      try { reply(command.id, { ok: true, ret: described(value) }); } finally { ops.pop(); }
    }, (err) => reply(command.id, { ok: false, thrown: encode(err) }));
    return undefined;
  }
  return reply(command.id, { ok: true, ret: described(made) });
}

function described(value) {
  return value !== null && (typeof value === 'object' || typeof value === 'function') ? register(value) : encode(value);
}

function call(command) {
  const target = decode({ $ref: command.target });
  const method = target[command.method];
  if (typeof method !== 'function') {
    throw new TypeError(`${className(target)}.${command.method} is not a function`);
  }
  const result = method.apply(target, command.args.map(decode));
  return reply(command.id, { ok: true, ret: encode(result) });
}

function reset(command) {
  // A process serves the next check (isolation "reuse"): the kit's handles and objects are dropped, and
  // the module is evaluated afresh (its dependencies under node_modules are kept).
  handles.clear();
  kitObjects.clear();
  if (loadedBy !== 'require') return reply(command.id, { ok: true, reloaded: false });
  for (const key of Object.keys(require.cache)) {
    if (key !== __filename && !key.includes(`${path.sep}node_modules${path.sep}`)) delete require.cache[key];
  }
  try {
    loaded = require(path.resolve(MODULE));
  } catch (err) {
    return reply(command.id, { ok: false, thrown: encode(err) });
  }
  return reply(command.id, { ok: true, reloaded: true, exports: exportedFunctions(loaded) });
}

// -- Node streams (docs/node.md, "Node streams and JSGI") -------------------------------------------
//
// Events are observed by patching EventEmitter.prototype.emit once, for the objects the kit created with
// `watch` only: a listener would change what it observes (on('data') makes a readable flow). What is recorded
// is what reaches EventEmitter's emit, i.e. the events delivered; a subclass that filters before calling it
// shows only what it lets through. No 'error' listener is added either: an 'error' nobody listens to throws
// as it would in production (into the kit's call, or as an uncaught exception the driver records and
// survives), and the emit is recorded before that.

const EventEmitter = require('events');

const watched = new WeakMap(); // object the kit created -> its handle
const unhandledErrors = new WeakSet(); // errors emitted as 'error' while nobody listened
const emitUnobserved = EventEmitter.prototype.emit;

EventEmitter.prototype.emit = function emitObserved(name, ...args) {
  const handle = watched.get(this);
  if (handle !== undefined) {
    let heard = 0;
    try { heard = typeof this.listenerCount === 'function' ? this.listenerCount(name) : 0; } catch (err) { /* a hostile getter */ }
    // A Symbol-named event is the implementation's own bookkeeping (no stream event has such a name): flagged.
    emit({ ev: 'emit', obj: handle, name: String(name), args: args.map((a) => encode(a)), listeners: heard,
      symbol: typeof name === 'symbol' });
    if (name === 'error' && heard === 0) {
      try {
        return emitUnobserved.call(this, name, ...args);
      } catch (err) { // what EventEmitter throws for an 'error' nobody listens to (the error, or a wrapper)
        if (isObject(err)) unhandledErrors.add(err);
        throw err;
      }
    }
  }
  return emitUnobserved.call(this, name, ...args);
};

function batch(command) {
  // Several calls in one command, with nothing of the loop's between them (a burst of writes that fills a
  // write queue); each event inside names the call it happened in.
  const results = [];
  try {
    for (let k = 0; k < command.calls.length; k += 1) {
      batchCall = k;
      const one = command.calls[k];
      try {
        const target = decode({ $ref: one.target });
        const method = target[one.method];
        if (typeof method !== 'function') throw new TypeError(`${className(target)}.${one.method} is not a function`);
        results.push({ ok: true, ret: encode(method.apply(target, one.args.map(decode))), turn });
      } catch (err) {
        // Whether EventEmitter threw it, for an 'error' event nobody listened to: no throw of the method's own.
        results.push({ ok: false, thrown: encode(err), turn, unhandled_error_event: isObject(err) && unhandledErrors.has(err) });
      }
    }
  } finally {
    batchCall = null;
  }
  return reply(command.id, { ok: true, results });
}

function kitCallback(label) {
  // A callback the kit passes (write(chunk, cb)): each call is an event, numbered and placed in its command
  // and turn, so "called asynchronously" is read off in_op and turn.
  return function rstckCallback(...args) {
    emit({ ev: 'callback', obj: String(label), name: String(label), args: args.map((a) => encode(a)) });
  };
}

function kitError(spec) {
  const Ctor = BUILTIN_ERRORS[spec.$error] || Error;
  const made = new Ctor(String(spec.message || ''));
  if (!(spec.$error in BUILTIN_ERRORS)) made.name = spec.$error;
  return made;
}

function get(command) {
  const target = decode({ $ref: command.target });
  const value = target[command.property];
  return reply(command.id, { ok: true, ret: encode(value), type: typeof value });
}

function inspect(command) {
  // What an object offers: the type of each named member, and whether it is an instance of each named class
  // ("stream" is Node's own Stream; "like:HANDLE" the class of another object; else an export's dotted path).
  const target = decode({ $ref: command.target });
  const members = {};
  for (const name of command.members || []) {
    try { members[name] = typeof target[name]; } catch (err) { members[name] = 'throws'; }
  }
  const instanceOf = {};
  for (const name of command.classes || []) {
    let cls;
    if (name === 'stream') cls = require('stream').Stream;
    else if (name.startsWith('like:')) cls = (handles.get(name.slice(5)) || {}).constructor;
    else cls = lookup(name);
    try { instanceOf[name] = typeof cls === 'function' && target instanceof cls; } catch (err) { instanceOf[name] = false; }
  }
  return reply(command.id, { ok: true, members, instance_of: instanceOf });
}

function listen(command) {
  // An explicit listener, for what needs one (a readable flows once 'data' has a listener; a JSGI stream's
  // events are heard through addListener). Its nth call makes the nth reaction, if any: a method called on
  // the same object inside the listener, as a consumer pausing on data does.
  const target = decode({ $ref: command.target });
  const reactions = command.react || [];
  let calls = 0;
  const listener = function rstckListener(...args) {
    calls += 1;
    if (command.record) emit({ ev: 'heard', obj: command.target, name: command.event, args: args.map((a) => encode(a)) });
    const reaction = reactions[calls - 1];
    if (!reaction) return;
    try {
      const ret = target[reaction.method](...(reaction.args || []).map(decode));
      emit({ ev: 'reaction', obj: command.target, name: reaction.method, ret: encode(ret) });
    } catch (err) {
      emit({ ev: 'reaction', obj: command.target, name: reaction.method, thrown: encode(err) });
    }
  };
  const method = command.method || 'on';
  if (typeof target[method] !== 'function') throw new TypeError(`${className(target)}.${method} is not a function`);
  target[method](command.event, listener);
  return reply(command.id, { ok: true });
}

// -- idle detection (docs/node.md, "How settling works") -----------------------------------------

let baseline = new Map(); // the driver's own resources: its read on descriptor 0, the stdio handles
let idleWait = null;

function counted(list) {
  const counts = new Map();
  for (const name of list) counts.set(name, (counts.get(name) || 0) + 1);
  return counts;
}

function pendingResources(ownTimeout) {
  if (activeResources === null) return [];
  const counts = counted(activeResources());
  for (const [name, n] of baseline) counts.set(name, (counts.get(name) || 0) - n);
  if (ownTimeout) counts.set('Timeout', (counts.get('Timeout') || 0) - 1);
  const pending = [];
  for (const [name, n] of counts) for (let k = 0; k < n; k += 1) pending.push(name);
  return pending;
}

function awaitIdle(command) {
  const quietNeeded = activeResources === null ? Math.max(8, command.quiet_turns || 3) : (command.quiet_turns || 3);
  const started = hrtime();
  const budget = BigInt(Math.max(0, Math.floor((command.max_ms || 0) * 1e6)));
  const wait = { id: command.id, stopped: false };
  idleWait = wait;
  let quiet = 0;
  let lastSeq = seq;
  let turns = 0;
  const step = (ownTimeout) => {
    if (wait.stopped) return;
    turn += 1;
    turns += 1;
    const pending = pendingResources(ownTimeout);
    if (seq === lastSeq && pending.length === 0) quiet += 1; else quiet = 0;
    lastSeq = seq;
    if (quiet >= quietNeeded) {
      idleWait = null;
      return reply(wait.id, { idle: true, turn, turns, released: command.collect ? collect() : [] });
    }
    if (hrtime() - started > budget) {
      idleWait = null;
      return reply(wait.id, { idle: false, turn, turns, pending });
    }
    if (pending.length && pending.every((name) => name === 'Timeout')) {
      setTimeoutOwn(() => step(true), 1); // only timers: no need to spin until they fire
    } else {
      setImmediateOwn(() => step(false));
    }
    return undefined;
  };
  setImmediateOwn(() => step(false));
}

function nextTurn() {
  turn += 1;
}

function abortIdle() {
  if (idleWait !== null) {
    idleWait.stopped = true;
    const id = idleWait.id;
    idleWait = null;
    reply(id, { idle: false, stopped: true, turn });
  }
}

function collect() {
  // 3.13: the kit's stand-ins that nothing in JavaScript references any more. Run in a turn of its own,
  // so that no WeakRef read in this job keeps its target alive.
  const full = collector();
  if (full === null) return [];
  full();
  const released = [];
  for (const [id, ref] of kitObjects) {
    if (ref.deref() === undefined) {
      kitObjects.delete(id);
      released.push(id);
    }
  }
  return released;
}

// -- what the implementation does besides answering ----------------------------------------------

for (const level of ['log', 'info', 'warn', 'error', 'debug', 'trace']) {
  console[level] = function consoleHook(...args) {
    let text;
    try { text = util.format(...args); } catch (err) { text = '<unprintable>'; }
    if (level === 'trace') text = `Trace: ${text}\n${new Error().stack.split('\n').slice(2, 6).join('\n')}`;
    emit({ ev: 'console', level, text: text.slice(0, 4000), errors: args.filter(isError).map(encodeError) });
  };
}

process.exit = function exitHook(code) {
  emit({ ev: 'exit', code: code === undefined ? process.exitCode || 0 : code, stack: new Error().stack });
  realExit(code);
};

process.on('uncaughtException', (err, origin) => {
  emit({ ev: 'uncaught', origin, error: encode(err), unhandled_error_event: isObject(err) && unhandledErrors.has(err) });
});
process.on('unhandledRejection', (reason) => {
  emit({ ev: 'uncaught', origin: 'unhandledRejection', error: encode(reason) });
});

// -- start ---------------------------------------------------------------------------------------

function start() {
  // Commands are read with fs.read on descriptor 0, one read always outstanding: cheaper to start than
  // process.stdin's stream, and its one FSReqCallback is part of the baseline.
  const stdinDecoder = new StringDecoder('utf8');
  const chunk = Buffer.allocUnsafe(65536);
  let stdinBuffer = '';
  const readCommands = () => fs.read(0, chunk, 0, chunk.length, null, (err, n) => {
    if (err && err.code === 'EAGAIN') { setTimeoutOwn(readCommands, 1); return; }
    if (err || n === 0) realExit(0); // the kit is gone
    stdinBuffer += stdinDecoder.write(chunk.subarray(0, n));
    const commands = [];
    for (let end = stdinBuffer.indexOf('\n'); end >= 0; end = stdinBuffer.indexOf('\n')) {
      const line = stdinBuffer.slice(0, end);
      stdinBuffer = stdinBuffer.slice(end + 1);
      if (line) commands.push(JSON.parse(line));
    }
    // A command's turn is the command and the ticks and microtasks it queued: the driver's immediate,
    // queued first, ends it before any immediate of the command's runs, so what comes on an immediate, a
    // timer or later I/O is in a later turn even when no await_idle heartbeat runs meanwhile.
    if (commands.some((command) => command.op !== 'await_idle')) setImmediateOwn(nextTurn);
    for (const command of commands) dispatch(command);
    readCommands();
  });
  readCommands();
  countStdioHandles();
  // The baseline is taken before the implementation loads: a handle its module opens is its own.
  setImmediateOwn(() => {
    baseline = counted(activeResources === null ? [] : activeResources());
    load();
  });
}

function countStdioHandles() {
  // Node makes the stdout and stderr handles (pipes, here) when they are first used: whoever uses them
  // first, they are the driver's, not pending work of the implementation's.
  for (const name of ['stdout', 'stderr']) {
    const descriptor = Object.getOwnPropertyDescriptor(process, name);
    if (!descriptor || typeof descriptor.get !== 'function' || !descriptor.configurable) continue;
    let made = false;
    Object.defineProperty(process, name, {
      configurable: true,
      enumerable: descriptor.enumerable,
      get() {
        const stream = descriptor.get.call(process);
        if (!made) {
          made = true;
          const kind = stream && stream._handle && stream._handle.constructor && stream._handle.constructor.name;
          const resource = { Pipe: 'PipeWrap', TTY: 'TTYWrap', TCP: 'TCPWrap' }[kind] || null;
          if (resource !== null) baseline.set(resource, (baseline.get(resource) || 0) + 1);
        }
        return stream;
      },
    });
  }
}

function load() {
  const ready = {
    ev: 'ready', node: process.version, pid: process.pid, versions: process.versions,
    idle_probe: activeResources !== null, gc: typeof WeakRef === 'function', exports: [], load_error: null,
  };
  const file = path.resolve(MODULE);
  const done = (exported) => {
    loaded = exported;
    ready.exports = exportedFunctions(exported);
    emit(ready);
  };
  const failed = (err) => {
    ready.load_error = encode(err);
    emit(ready);
  };
  try {
    done(require(file));
  } catch (err) {
    if (err && (err.code === 'ERR_REQUIRE_ESM' || err.code === 'ERR_REQUIRE_ASYNC_MODULE')) {
      loadedBy = 'import';
      import(require('url').pathToFileURL(file).href).then((ns) => done(ns.default && typeof ns.default === 'object'
        ? Object.assign({}, ns.default, ns) : ns), failed);
    } else {
      failed(err);
    }
  }
}

function exportedFunctions(exported) {
  if (exported === null || (typeof exported !== 'object' && typeof exported !== 'function')) return [];
  const names = [];
  for (const key of Object.keys(exported)) {
    try { if (typeof exported[key] === 'function') names.push(key); } catch (err) { /* a throwing getter */ }
  }
  return names;
}

start();
