// ---- The kit's side, written out (rstck/reports/repro/node_stream_runtime.js): the calls rstck's stream driver
// makes, a recorder of what the streams do as the driver observes it (the events EventEmitter's emit delivers for
// the streams the kit made, the kit's listeners and callbacks being called, each placed in the call it happened
// inside and in a turn of Node's loop), and the judgements of the checks. Node's own modules only.

const EventEmitter = require('events');

const events = []; // what the implementation did that the recorder observed, in order
const labels = new WeakMap(); // the kit's names of what it made and passed (streams, callbacks)
const watched = new WeakSet(); // the streams whose emits are recorded
const unhandledErrors = new WeakSet(); // errors EventEmitter threw for an 'error' event nobody listened to
const conditions = []; // where the check stops short of its judgement
let stoppedShort = '';
let underway = null; // the kit's call under way: events inside it are synchronous to it

const emitUnobserved = EventEmitter.prototype.emit;
EventEmitter.prototype.emit = function emitObserved(name, ...args) {
  // As rstck's driver: no listener of the kit's (one on 'data' would make a readable flow), only what reaches emit.
  if (!watched.has(this)) return emitUnobserved.call(this, name, ...args);
  if (typeof name === 'symbol') {
    activity += 1; // the implementation's own bookkeeping, no stream event: busy all the same
    return emitUnobserved.call(this, name, ...args);
  }
  observe('emit', this, String(name), args);
  let listened = 1;
  try { listened = this.listenerCount(name); } catch (error) { /* a hostile getter: as if listened to */ }
  if (name !== 'error' || listened > 0) return emitUnobserved.call(this, name, ...args);
  try {
    return emitUnobserved.call(this, name, ...args);
  } catch (error) {
    if (error !== null && (typeof error === 'object' || typeof error === 'function')) unhandledErrors.add(error);
    throw error;
  }
};

function kitName(value) {
  return (value !== null && (typeof value === 'object' || typeof value === 'function') && labels.get(value)) || '';
}

function kept() {
  if (stoppedShort) return `the check stops short of judging ${config.rule} here (${stoppedShort}), as rstck's does`;
  return `nothing broke ${config.rule} in this scenario`;
}

function observe(kind, obj, name, args, extra = {}) {
  const event = { kind, of: labels.get(obj), name, args, inCall: underway, turn: loopTurns, ...extra };
  const shown = args.map(show).join(', ');
  const where = underway === null ? ` (turn ${loopTurns})` : '';
  const said = {
    emit: `${event.of} emits '${name}'(${shown})`,
    heard: `the kit's listener hears ${event.of} '${name}'(${shown})`,
    callback: `${event.of}(${shown}) is called`,
    reaction: `${event.of}.${name}() in the kit's listener ${extra.thrown === undefined ? 'returned' : `threw ${show(extra.thrown)}`}`,
  }[kind];
  event.seq = log(`${said}${where}`);
  events.push(event);
  return event;
}

// -- the kit's steps ----------------------------------------------------------------------------------

function operation() {
  // A turn of Node's loop begins with each of the kit's commands: what the implementation defers to setImmediate
  // comes in a later turn than the call, what it defers to nextTick or a microtask in the same one.
  setImmediate(() => { loopTurns += 1; });
}

async function make(target, factory, args, label, { watch = true } = {}) {
  const text = `${factory}(${args.map(show).join(', ')})`;
  log(text);
  if (typeof target[factory] !== 'function') throw new CannotRun(`the module exports no ${factory}()`);
  operation();
  let made;
  try {
    made = target[factory](...args);
    if (made !== null && typeof made === 'object' && typeof made.then === 'function') made = await made;
  } catch (error) {
    throw new CannotRun(`${text} threw ${show(error)}`);
  }
  if (made === null || (typeof made !== 'object' && typeof made !== 'function')) {
    throw new CannotRun(`${text} returned ${show(made)}: not an object`);
  }
  labels.set(made, label);
  if (watch) watched.add(made);
  note(`${text} made ${label} (${className(made)})`);
  await turn();
  return made;
}

function callback(label) {
  // A callback the kit passes (write(chunk, cb)): each call of it is observed.
  const passed = function rstckCallback(...args) { observe('callback', passed, label, args); };
  labels.set(passed, label);
  return passed;
}

function into(text, run) {
  // A call into the implementation, marked for the watching process (a call that never returns is a hang).
  out(`${MARK}call ${config.rule} ${text}`);
  depth += 1;
  try {
    return run();
  } finally {
    depth -= 1;
    out(`${MARK}done`);
  }
}

async function call(obj, method, ...args) {
  const [outcome] = await burst([obj, method, ...args]);
  return outcome;
}

async function burst(...calls) {
  // Calls made one after the other with nothing of Node's loop between them.
  operation();
  const outcomes = calls.map(([obj, method, ...args]) => invoke(obj, method, args));
  for (const outcome of outcomes) outcome.seqAfter = seq;
  await turn();
  return outcomes;
}

function invoke(obj, method, args) {
  const outcome = { text: `${show(obj)}.${method}(${args.map(show).join(', ')})`, raised: false, errorEvent: false };
  const at = log(outcome.text);
  underway = outcome;
  try {
    outcome.ret = into(outcome.text, () => {
      if (typeof obj[method] !== 'function') throw new TypeError(`${className(obj)}.${method} is not a function`);
      return obj[method](...args);
    });
  } catch (error) {
    outcome.thrown = error;
    outcome.errorEvent = unhandledErrors.has(error);
    outcome.raised = !outcome.errorEvent;
  } finally {
    underway = null;
  }
  outcome.turn = loopTurns;
  note(`#${at} ${outcome.errorEvent ? "emitted an 'error' event nobody listened to, which EventEmitter threw out of the call" : returned(outcome)}`);
  return outcome;
}

function returned(outcome) {
  return outcome.raised ? `threw ${show(outcome.thrown)}` : `returned ${show(outcome.ret)}`;
}

async function read(obj, property) {
  const found = { text: `${show(obj)}.${property}` };
  operation();
  try {
    found.value = into(found.text, () => obj[property]);
    note(`${found.text} is ${show(found.value)}`);
  } catch (error) {
    found.thrown = error;
    note(`reading ${found.text} threw ${show(error)}`);
  }
  await turn();
  return found;
}

async function inspect(obj, { members = [], classes = [] } = {}) {
  // typeof each member; whether obj is an instance of each class: 'stream' (Node's Stream), { like: another } (its
  // class), or an export of the module by its dotted path.
  const found = { of: show(obj), members: {}, instanceOf: {} };
  operation();
  into(`the members of ${found.of}`, () => {
    for (const name of members) {
      try { found.members[name] = typeof obj[name]; } catch (error) { found.members[name] = 'throws'; }
    }
    for (const cls of classes) {
      const key = typeof cls === 'string' ? cls : `the class of ${show(cls.like)}`;
      let ctor;
      if (cls === 'stream') ctor = require('stream').Stream;
      else if (typeof cls === 'string') ctor = cls.split('.').reduce((value, part) => (value == null ? value : value[part]), loaded);
      else ctor = cls.like.constructor;
      try { found.instanceOf[key] = typeof ctor === 'function' && obj instanceof ctor; } catch (error) { found.instanceOf[key] = false; }
    }
  });
  const shown = [...Object.entries(found.members).map(([name, type]) => `${name} is ${type}`),
    ...Object.entries(found.instanceOf).map(([name, is]) => `${is ? 'an' : 'not an'} instance of ${name}`)];
  note(`${found.of}: ${shown.join(', ')}`);
  await turn();
  return found;
}

async function listen(obj, event, { react = [], record = false, method = 'on' } = {}) {
  // The kit's own listener: heard (`record`), and its nth call makes the nth reaction, a method called on the same
  // stream inside the listener, as a consumer pausing at the first chunk does.
  log(`${show(obj)}.${method}('${event}', the kit's listener)`);
  let heard = 0;
  const listener = function rstckListener(...args) {
    heard += 1;
    if (record) observe('heard', obj, event, args);
    const reaction = react[heard - 1];
    if (!reaction) return;
    const [name, ...reactionArgs] = reaction;
    try {
      obj[name](...reactionArgs);
      observe('reaction', obj, name, []);
    } catch (error) {
      observe('reaction', obj, name, [], { thrown: error });
    }
  };
  operation();
  if (typeof obj[method] !== 'function') throw new CannotRun(`${show(obj)}.${method} is not a function`);
  try {
    into(`${show(obj)}.${method}('${event}', listener)`, () => obj[method](event, listener));
  } catch (error) {
    throw new CannotRun(`${show(obj)}.${method}('${event}', listener) threw ${show(error)}`);
  }
  await turn();
}

async function settle() {
  const how = await untilQuiet();
  note(how === 'idle' ? 'settled' : `settled: ${how}`);
  return { idle: how === 'idle' };
}

function mark() {
  // The point among the events reached now: later events come after it.
  return { seq };
}

function unless(condition, fields) {
  conditions.push([condition, fields]);
}

// -- what was observed ----------------------------------------------------------------------------------

function eventsOf(of, { kind = 'emit', names = null, after = null, before = null } = {}) {
  const label = labels.get(of);
  return events.filter((e) => e.kind === kind && e.of === label && (names === null || names.includes(e.name))
    && (after === null || e.seq > after.seq) && (before === null || e.seq <= before.seq));
}

function textOf(chunk) {
  // A chunk as text where it is one: Node hands a written string to the sink as a Buffer.
  return Buffer.isBuffer(chunk) || chunk instanceof Uint8Array ? Buffer.from(chunk).toString('utf8') : chunk;
}

function chunksOf(found) {
  return found.map((e) => (e.args.length ? textOf(e.args[0]) : null));
}

function shownChunks(chunks) {
  return `[${chunks.map(show).join(', ')}]`;
}

function waiting(calls, written, k, writes) {
  // How many of the burst's writes (its first `writes` calls) up to call k had not been reported written when call
  // k returned.
  const upTo = calls.slice(0, k + 1);
  const done = eventsOf(written, { kind: 'callback' }).filter((e) => upTo.includes(e.inCall)).length;
  return Math.min(k + 1, writes) - done;
}

function what(of, kind) {
  return kind === 'heard' ? `the kit's listener on ${show(of)} to hear` : `${show(of)} to emit`;
}

// Where a check stops short of its judgement, against some implementations: each names what it saw, or ''.
const CONDITIONS = {
  read_is: ({ read, value }) => (read.value === value ? `${read.text} is ${show(value)}` : ''),
  read_is_not: ({ read, value }) => (read.value !== value ? `${read.text} is not ${show(value)}` : ''),
  lacks: ({ inspection, member }) => (inspection.members[member] !== 'function' ? `${inspection.of} has no ${member}()` : ''),
  raised: ({ call }) => (call.raised ? `${call.text} threw, which refuses the call` : ''),
  events: ({ of, kind, names, before = null, atLeast = null, atMost = null }) => {
    const count = eventsOf(of, { kind, names, before }).length;
    const held = (atLeast !== null && count >= atLeast) || (atMost !== null && count <= atMost);
    return held ? `${count} ${names.join(' or ')} ${kind === 'reaction' ? 'reactions' : 'events'} of ${show(of)}` : '';
  },
};

// The checks' judgements: each gives [expected, observed] when the sentence is broken, else null.
const JUDGEMENTS = {
  no_throw: ({ call }) => (call.raised ? [`${call.text} not to throw`, returned(call)] : null),
  throws: ({ call }) => (call.raised ? null : [`${call.text} to throw`, call.errorEvent ? "it emitted an 'error' event, it threw nothing of its own" : returned(call)]),
  returns: ({ call, value }) => (!call.raised && call.ret === value ? null : [`${call.text} to return ${show(value)}`, returned(call)]),
  called: ({ callback }) => (eventsOf(callback, { kind: 'callback' }).length ? null : [`${show(callback)} to be called`, 'it was never called (settled)']),
  not_inside: ({ of, kind, names = null, calls }) => {
    for (const outcome of calls) {
      const early = eventsOf(of, { kind, names }).find((e) => e.inCall === outcome);
      if (early) return [`${kind === 'callback' ? show(of) : `no ${early.name} event`} not before nextTick (not inside the call that caused it)`, `#${early.seq} came inside ${outcome.text}`];
    }
    return null;
  },
  emitted: ({ of, name, kind, after = null }) => (eventsOf(of, { kind, names: [name], after }).length ? null
    : [`${what(of, kind)} '${name}'${after ? ` after #${after.seq}` : ''}`, `no '${name}' event (settled)`]),
  silent: ({ of, kind, names = null, after = null }) => {
    const found = eventsOf(of, { kind, names, after });
    return found.length ? [`no ${names ? names.join(' or ') : ''} event of ${show(of)}${after ? ` after #${after.seq}` : ''}`, found.map((e) => `#${e.seq} '${e.name}'`).join(', ')] : null;
  },
  nothing_twice: ({ of, after }) => {
    const names = eventsOf(of, { after }).map((e) => e.name);
    const twice = [...new Set(names.filter((name, k) => names.indexOf(name) !== k))];
    if (!twice.length && !names.includes('error')) return null;
    const shown = twice.map((name) => `'${name}' ${names.filter((n) => n === name).length} times`).join(', ') || "'error'";
    return ['a second destroy() to do nothing (no event twice, no error)', `after #${after.seq} it emitted ${shown}`];
  },
  flag: ({ reads, value }) => {
    const wrong = reads.find((found) => found.thrown !== undefined || found.value !== value);
    return wrong ? [`${wrong.text} to be ${show(value)}`, wrong.thrown !== undefined ? `reading it threw ${show(wrong.thrown)}` : `it is ${show(wrong.value)}`] : null;
  },
  not_flag: ({ reads, value }) => {
    const wrong = reads.filter((found) => found.value === value);
    return wrong.length ? [`${reads.map((found) => found.text).join(' and ')} not ${show(value)}`, `${wrong.map((found) => found.text).join(' and ')} ${show(value)}`] : null;
  },
  read: ({ read }) => (read.thrown === undefined ? null : [`${read.text} to be readable`, `reading it threw ${show(read.thrown)}`]),
  members: ({ inspection, flags, methods }) => {
    const found = inspection.members;
    const missing = [...flags.filter((name) => found[name] === 'undefined' || found[name] === 'throws').map((name) => `${name} (a flag)`),
      ...methods.filter((name) => found[name] !== 'function').map((name) => `${name}()`)];
    return missing.length ? [`${inspection.of} to have ${[...flags, ...methods.map((name) => `${name}()`)].join(', ')}`, `it lacks ${missing.join(', ')}`] : null;
  },
  instance_of: ({ inspection }) => (Object.values(inspection.instanceOf).some(Boolean) ? null
    : [`${inspection.of} to be an instance of the Stream base class (Node's Stream, the module's Stream, or the class of createStream())`, 'it is an instance of none']),
  settled: ({ settle: settled }) => (settled.idle ? null : ['the streams to settle', 'they were still busy at the deadline']),
  data: ({ of, kind, chunks, sorted = false }) => {
    const found = chunksOf(eventsOf(of, { kind, names: ['data'] }));
    const same = sorted ? JSON.stringify(found.map(String).sort()) === JSON.stringify([...chunks].sort())
      : found.length === chunks.length && found.every((chunk, k) => chunk === chunks[k]);
    return same ? null : [`data ${shownChunks(chunks)}${sorted ? '' : ', in order'}`, `data ${shownChunks(found)}`];
  },
  data_without: ({ of, kind, chunk }) => (chunksOf(eventsOf(of, { kind, names: ['data'] })).includes(chunk)
    ? [`no data ${show(chunk)}`, `data ${show(chunk)} was delivered`] : null),
  data_has_chunk: ({ of }) => {
    const empty = eventsOf(of, { names: ['data'] }).find((e) => !e.args.length || e.args[0] === null || e.args[0] === undefined);
    return empty ? ['data events with a chunk', `#${empty.seq} data(${empty.args.map(show).join(', ')})`] : null;
  },
  after_last_data: ({ of, name, kind, which }) => {
    const found = eventsOf(of, { kind, names: [name] });
    const data = eventsOf(of, { kind, names: ['data'] });
    if (!found.length || !data.length) return null;
    const event = which === 'first' ? found[0] : found[found.length - 1];
    return event.seq < data[data.length - 1].seq ? [`${name} after the last data event`, `${name} #${event.seq} before data #${data[data.length - 1].seq}`] : null;
  },
  at_most: ({ of, name, kind, count }) => {
    const found = eventsOf(of, { kind, names: [name] });
    return found.length > count ? [`at most ${count} ${name}`, `${found.length} ${name} events`] : null;
  },
  reaction_returned: ({ of, method }) => {
    const reaction = eventsOf(of, { kind: 'reaction', names: [method] })[0];
    return reaction && reaction.thrown !== undefined ? [`${method}() to be callable in a listener`, `it threw ${show(reaction.thrown)}`] : null;
  },
  silent_after_reaction: ({ of, reaction, name }) => {
    const made = eventsOf(of, { kind: 'reaction', names: [reaction] })[0];
    const later = made ? eventsOf(of, { names: [name], after: made }) : [];
    return later.length ? [`no ${name} event after ${reaction}()`, `#${later[0].seq} ${name} ${shownChunks(chunksOf(later))} after ${reaction}() (#${made.seq})`] : null;
  },
  called_after_written: ({ callback, written, chunk = null, nth = 1 }) => {
    const calls = eventsOf(callback, { kind: 'callback' });
    const reported = eventsOf(written, { kind: 'callback' }).filter((e) => chunk === null || (e.args.length && textOf(e.args[0]) === chunk));
    const due = reported[chunk === null ? nth - 1 : 0];
    return calls.length && due && calls[0].seq < due.seq ? [`${show(callback)} called once ${chunk === null ? `chunk ${nth}` : show(chunk)} is written`, `#${calls[0].seq} called before it was reported written (#${due.seq})`] : null;
  },
  written: ({ written, chunks }) => {
    const found = chunksOf(eventsOf(written, { kind: 'callback' }));
    return found.length === chunks.length && found.every((chunk, k) => chunk === chunks[k]) ? null : [`${shownChunks(chunks)} written`, `written: ${shownChunks(found)}`];
  },
  false_while_waiting: ({ calls, written, writes }) => {
    const last = calls[calls.length - 1];
    if (waiting(calls, written, calls.length - 1, writes) === 0) return null; // nothing waited: the check's n/a
    return !last.raised && last.ret === false ? null : [`${last.text} to return false while chunks wait`, returned(last)];
  },
  false_once_full: ({ calls, written, highWaterMark }) => {
    for (let k = 0; k < calls.length; k += 1) {
      const count = waiting(calls, written, k, calls.length);
      if (count > highWaterMark && calls[k].ret !== false) return [`write() to return false once more than ${highWaterMark} chunks wait`, `${calls[k].text} ${returned(calls[k])} with ${count} chunks waiting`];
    }
    return null;
  },
  drain_after_false: ({ of, calls, written = null, anytime = false }) => {
    const falses = calls.filter((outcome) => !outcome.raised && outcome.ret === false);
    if (!falses.length) return null; // no call said false: the check's n/a
    const last = falses[falses.length - 1];
    const drains = eventsOf(of, { names: ['drain'], after: anytime ? null : { seq: last.seqAfter } });
    if (!drains.length) return [`${show(of)} to emit 'drain' after ${last.text} returned false`, "no 'drain' event (settled)"];
    const reported = written === null ? [] : eventsOf(written, { kind: 'callback' });
    const drain = drains[drains.length - 1];
    if (reported.length && drain.seq < reported[reported.length - 1].seq) return ['drain once the queue is emptied', `the last drain (#${drain.seq}) came before the last chunk was written (#${reported[reported.length - 1].seq})`];
    return null;
  },
  at_once: ({ of, name, call: outcome }) => {
    const event = eventsOf(of, { names: [name] })[0];
    if (!event || event.inCall === outcome || event.turn === outcome.turn) return null;
    return [`'${name}' emitted immediately (inside ${outcome.text}, or in its turn of Node's loop)`, `#${event.seq} in turn ${event.turn}, ${outcome.text} returned in turn ${outcome.turn}`];
  },
};

function judge(rule, judgement, fields) {
  // The check's judgement of `rule`, unless it would have stopped short of it on what was observed.
  for (const [condition, given] of conditions) {
    stoppedShort = CONDITIONS[condition](given);
    if (stoppedShort) return;
  }
  const broken = JUDGEMENTS[judgement](fields);
  if (broken) violation(rule, broken[0], broken[1]);
}
