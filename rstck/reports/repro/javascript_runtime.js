// ---- The kit's side, written out (rstck/reports/repro/javascript_runtime.js): a recording subscriber and a
// recording source that judge every signal as rstck's probes do, settling on Node's loop, and the verdict. Node's
// own modules only.

const recorders = new Set(); // of WeakRefs: 3.13 needs a recorder collectable
const kitSubscriptions = [];
const raises = []; // [object, method] of every call into the implementation that threw

function kitName(value) {
  // How the transcript names the kit's own objects.
  if (value instanceof Recorder || value instanceof Source || value instanceof KitSubscription) return value.name;
  return '';
}

function kept() {
  return `nothing broke ${config.rule} (nor any rule rstck's probes judge) in this scenario`;
}

function raisePending() {
  if (violations.some((v) => v.stops)) throw new Stop();
}

function fail(rule, expected, observed) {
  raisePending();
  violation(rule, expected, observed);
  throw new Stop();
}

function errorNames(error) {
  const names = new Set();
  if (error !== null && typeof error === 'object') {
    if (error.name) names.add(String(error.name));
    for (let proto = error; proto; proto = Object.getPrototypeOf(proto)) {
      if (proto.constructor && proto.constructor.name) names.add(proto.constructor.name);
    }
  }
  return names;
}

function call(text, obj, method, args, { rule, hangRule = null, goesOn = false }) {
  // Call into the implementation: a throw breaks `rule`; a call that never returns, `hangRule` (the watcher's).
  const at = log(text);
  out(`${MARK}call ${hangRule || rule} ${text}`);
  depth += 1;
  try {
    obj[method](...args);
  } catch (error) {
    raises.push([obj, method]);
    if (error instanceof OnPurpose) {
      note(`#${at} threw the kit's on-purpose error back (2.13: surfaced to the caller)`);
      return error;
    }
    note(`#${at} threw ${show(error)}`);
    violation(rule, `${method}() to return normally`, `#${at} threw ${show(error)}`, !goesOn);
    return error;
  } finally {
    depth -= 1;
    out(`${MARK}done`);
  }
  return null;
}

function expectRaise(obj, label, method, args, { errorType, rule }) {
  // A call the rule says must throw `errorType` (by name, or a base class's name) to its caller.
  const text = `${label}.${method}(${args.map(show).join(', ')})`;
  const at = log(text);
  out(`${MARK}call ${rule} ${text}`);
  depth += 1;
  try {
    obj[method](...args);
    violation(rule, `${method}() to throw ${errorType}`, `#${at} returned normally`);
  } catch (error) {
    if (!errorNames(error).has(errorType)) violation(rule, `${method}() to throw ${errorType}`, `#${at} threw ${show(error)}`);
  } finally {
    depth -= 1;
    out(`${MARK}done`);
  }
}

class OnPurpose extends Error {
  constructor() {
    super("the kit's subscriber fails on purpose (2.13)");
    this.name = 'OnPurpose';
  }
}

function positive(n) {
  return (typeof n === 'number' && n > 0) || (typeof n === 'bigint' && n > 0n);
}

class Recorder {
  // The kit's subscriber (rstck's probe#N): records each signal, judges it against the publisher rules (1.1,
  // 1.6-1.9, 2.12), and does what rstck did from inside a signal (`when`, `react`).
  constructor(name, { failOnNext = false, timed = false, repeats = {} } = {}) {
    this.name = name;
    this.failOnNext = failOnNext;
    this.timed = timed;
    this.repeats = { ...repeats };
    this.subscription = null;
    this.subscribed = 0;
    this.received = 0;
    this.completed = 0;
    this.requested = 0;
    this.callsAfterTerminal = 0;
    this.elements = [];
    this.errors = [];
    this.cancelled = false;
    this.endedUnasked = false;
    this.cancelSettled = false;
    this.failedOnPurpose = false;
    this.cancelledAt = null;
    this.silenceRule = null;
    this.reactions = new Map();
    this.arrivals = new Map();
    this.nesting = 0; // onNext within onNext
    this.inside = 0; // signals to this recorder under way
    this.maxDepth = 0;
    this.nulls = 0;
    this.slowestRequestS = 0;
    recorders.add(new WeakRef(this));
  }

  when(kind, nth, reaction) {
    this.reactions.set(`${kind} ${nth}`, reaction);
  }

  react(kind, repeat) {
    if (repeat === null) delete this.repeats[kind];
    else this.repeats[kind] = repeat;
  }

  onSubscribe(subscription) { this.signal('onSubscribe', subscription); }

  onNext(item) { this.signal('onNext', item); }

  onError(error) { this.signal('onError', error); }

  onComplete() { this.signal('onComplete', undefined); }

  signal(kind, arg) {
    const shown = kind === 'onComplete' ? '' : (kind === 'onSubscribe' && arg != null ? 'sub' : show(arg));
    const at = log(`${this.name}.${kind}(${shown})`);
    this.arrivals.set(kind, (this.arrivals.get(kind) || 0) + 1);
    const nth = kind === 'onNext' ? this.received + 1 : this.arrivals.get(kind);
    if (kind === 'onNext') {
      this.nesting += 1;
      this.maxDepth = Math.max(this.maxDepth, this.nesting);
    }
    depth += 1;
    this.inside += 1;
    try {
      if (arg == null && kind !== 'onComplete') {
        this.nulls += 1;
        note(`${this.name} throws TypeError (2.13: null argument)`);
        throw new TypeError(`${this.name}.${kind}: argument must not be null (rule 2.13)`);
      }
      this.admit(kind, at, arg);
      const reaction = this.reactions.get(`${kind} ${nth}`);
      if (reaction) reaction();
      const repeat = this.repeats[kind];
      if (repeat) this.repeat(repeat);
      if (kind === 'onNext' && this.failOnNext && !this.failedOnPurpose) {
        this.failedOnPurpose = true;
        this.silenceRule = '2.13';
        this.cancelled = true;
        throw new OnPurpose();
      }
    } finally {
      depth -= 1;
      this.inside -= 1;
      if (kind === 'onNext') this.nesting -= 1;
    }
  }

  repeat(what) {
    if (what.at != null && this.received !== what.at) return;
    if (what.while_below != null && this.received >= what.while_below) return;
    for (const n of what.requests || []) this.request(demand(n), { judgedAllTheSame: Boolean(what.judged_all_the_same) });
    if (what.cancel) this.cancel();
  }

  admit(kind, at, arg) {
    const where = `#${at} ${this.name}.${kind}`;
    if (kind === 'onSubscribe') {
      this.subscribed += 1;
      if (this.subscribed > 1) {
        violation('2.12', 'onSubscribe at most once for a given subscriber', `${where}: a second onSubscribe`);
        call('sub.cancel()', arg, 'cancel', [], { rule: '3.15' });
        return;
      }
      this.subscription = arg;
      return;
    }
    if (!this.subscribed) violation('1.9', 'onSubscribe before any other signal', `${where} came before onSubscribe`);
    else if (this.silenceRule) violation(this.silenceRule, 'no further signal', where);
    else if (this.terminated && this.callsAfterTerminal) {
      violation('1.6', 'the subscription to count as cancelled after a terminal signal',
        `${where} answered a call made after the terminal signal`);
    } else if (this.terminated) violation('1.7', 'no signal after a terminal signal', `${where} after ${this.terminalText()}`);
    else if (this.cancelSettled) violation('1.8', 'no signal once cancel has taken effect', `${where} after cancel had settled`);
    else if (kind === 'onNext' && this.received + 1 > this.requested) {
      violation('1.1', `at most ${this.requested} onNext (the total requested)`, `${where} is onNext number ${this.received + 1}`);
    }
    if (kind === 'onNext') {
      this.received += 1;
      this.elements.push(arg);
    } else if (kind === 'onComplete') this.completed += 1;
    else this.errors.push(arg);
  }

  get terminated() { return Boolean(this.completed || this.errors.length); }

  terminalText() { return this.completed ? 'onComplete' : `onError(${show(this.errors[0])})`; }

  observed() {
    const parts = [`${this.received} onNext`];
    if (this.completed) parts.push('onComplete');
    if (this.errors.length) parts.push(`onError(${show(this.errors[0])})`);
    if (!this.subscribed) parts.unshift('no onSubscribe');
    return parts.join(', ');
  }

  // ended: rstck's probe found its stream ended here too, and made no request either.
  request(n, { ruleIfRaises = null, judgedAllTheSame = false, ended = false } = {}) {
    if (this.subscription === null) return this.noSubscription('request');
    if (this.terminated) {
      this.endedUnasked = this.endedUnasked || !ended; // ended before a request rstck made on a live subscription
      return note(`${this.name} does not request(${show(n)}): its stream has ended`);
    }
    if (positive(n) && !this.cancelled) this.requested += Number(n);
    const rule = ruleIfRaises || (this.inside > 0 && positive(n) && Number(n) < 2 ** 63 - 1 ? '3.2' : '3.16');
    const started = process.hrtime.bigint();
    call(`sub.request(${show(n)})`, this.subscription, 'request', [n], { rule, goesOn: judgedAllTheSame });
    if (this.timed) this.slowestRequestS = Math.max(this.slowestRequestS, Number(process.hrtime.bigint() - started) / 1e9);
    return undefined;
  }

  requestAfterTerminal(n, { ruleIfRaises = '1.6' } = {}) {
    if (this.subscription === null) return this.noSubscription('request');
    this.callsAfterTerminal += 1;
    call(`sub.request(${show(n)})`, this.subscription, 'request', [n], { rule: ruleIfRaises });
    return undefined;
  }

  cancel({ ruleIfRaises = '3.15' } = {}) {
    if (this.subscription === null) return this.noSubscription('cancel');
    if (!this.cancelled) this.cancelledAt = this.received;
    this.cancelled = true;
    this.callsAfterTerminal += this.terminated ? 1 : 0;
    const started = process.hrtime.bigint();
    call('sub.cancel()', this.subscription, 'cancel', [], { rule: ruleIfRaises, hangRule: '3.5' });
    this.cancelTookS = Number(process.hrtime.bigint() - started) / 1e9;
    return undefined;
  }

  silence(rule) { this.silenceRule = rule; }

  letGo() { this.subscription = null; }

  noSubscription(what) {
    if (!violations.length) violation('1.9', `onSubscribe (a subscription to ${what} on)`, 'no onSubscribe arrived');
  }
}

const signalling = []; // [subscriber, kind] of the kit's signals under way

class KitSubscription {
  // The subscription the kit's source hands a subscriber under test: records request and cancel, and judges them
  // (2.3, 3.1).
  constructor(source, subscriber, name) {
    Object.assign(this, { source, subscriber, name, requests: [], requested: 0, delivered: 0, cancels: 0 });
    this.cancelSettled = false;
    this.announced = false;
    this.terminal = null;
    this.terminalReturned = false;
    this.silenceRule = null;
    kitSubscriptions.push(this);
  }

  get cancelled() { return this.cancels > 0; }

  get outstanding() { return this.cancelled ? 0 : Math.max(0, this.requested - this.delivered); }

  request(n) {
    this.called('request', [n]);
    if (this.terminal === null && !this.cancelled) {
      if (positive(n)) this.requested += Number(n);
      this.requests.push(n);
    }
    this.source.onRequest(this, n);
  }

  cancel() {
    this.called('cancel', []);
    this.cancels += 1;
  }

  called(kind, args) {
    const at = log(`${this.name}.${kind}(${args.map(show).join(', ')})`);
    const where = `#${at} ${this.name}.${kind}`;
    const inside = signalling.slice();
    if (inside.length && inside[inside.length - 1][0] !== this.subscriber && inside.every(([s]) => s !== this.subscriber)) {
      violation('3.1', 'request/cancel called only from within its own subscriber',
        `${where} was made while another subscriber was being signalled`);
    }
    const inTerminal = inside.filter(([s, k]) => s === this.subscriber && (k === 'onComplete' || k === 'onError'));
    if (this.silenceRule) violation(this.silenceRule, 'no further call on the subscription', where);
    else if (inTerminal.length) violation('2.3', `no call on the subscription from within ${inTerminal[inTerminal.length - 1][1]}`, where);
  }
}

class Source {
  // The kit's publisher (rstck's source#N): signals a subscriber under test when the scenario says so, or, given
  // `elements`, serves them against demand and then completes (or fails with `failWith`). It answers request(n <= 0)
  // with onError (3.9), and never sends what the publisher rules forbid: such a signal is left out, as rstck does.
  constructor(name, { elements = null, failWith = null } = {}) {
    this.name = name;
    this.subscriptions = [];
    this.items = elements === null ? null : elements[Symbol.iterator]();
    this.ahead = undefined;
    this.haveAhead = false;
    this.exhausted = elements === null;
    this.failWith = failWith;
    this.draining = false;
    this.onNextS = [];
  }

  get subscription() { return this.subscriptions[this.subscriptions.length - 1]; }

  subscribe(subscriber) {
    const sub = new KitSubscription(this, subscriber, `kit_sub${kitSubscriptions.length + 1}`);
    this.subscriptions.push(sub);
    this.emit(sub, 'onSubscribe', [sub]);
    if (this.items !== null) this.drain(sub);
  }

  pick(subscription) { return subscription == null ? this.subscription : this.subscriptions[subscription]; }

  sendNext(item, { subscription = null, ruleIfRaises = '2.13' } = {}) {
    this.emit(this.pick(subscription), 'onNext', [item], ruleIfRaises);
  }

  sendComplete({ subscription = null, ruleIfRaises = '2.13' } = {}) {
    this.terminate(this.pick(subscription), 'onComplete', [], ruleIfRaises);
  }

  sendError(error, { subscription = null, ruleIfRaises = '2.13' } = {}) {
    this.terminate(this.pick(subscription), 'onError', [error], ruleIfRaises);
  }

  sendAvailable(items, { subscription = null, limit = null, afterCancel = 0 } = {}) {
    const sub = this.pick(subscription);
    const iterator = items[Symbol.iterator] ? items[Symbol.iterator]() : items;
    let sent = 0;
    let sentAfterCancel = 0;
    while (sub.requested > sub.delivered && (limit === null || sent < limit) && !sub.terminal) {
      if (sub.cancelled) {
        if (sentAfterCancel >= afterCancel || sub.cancelSettled) break;
        sentAfterCancel += 1;
      }
      const next = iterator.next();
      if (next.done) break;
      this.emit(sub, 'onNext', [next.value], sub.cancelled ? '2.8' : '2.13');
      sent += 1;
    }
    return sent;
  }

  canSignal() { return this.subscription.terminal === null && !this.subscription.cancelSettled; }

  terminate(sub, kind, args, ruleIfRaises = '2.13') {
    if (!this.lawful(sub, kind)) return;
    sub.terminal = kind;
    try {
      this.send(sub, kind, args, ruleIfRaises);
    } finally {
      sub.terminalReturned = true;
    }
  }

  emit(sub, kind, args, ruleIfRaises = '2.13') {
    if (!this.lawful(sub, kind)) return;
    if (kind === 'onSubscribe') sub.announced = true;
    else if (kind === 'onNext') sub.delivered += 1;
    this.send(sub, kind, args, ruleIfRaises);
  }

  lawful(sub, kind) {
    let why = '';
    if (kind === 'onSubscribe' && sub.announced) why = 'a second onSubscribe';
    else if (kind !== 'onSubscribe' && !sub.announced) why = `${kind} before onSubscribe`;
    else if (sub.terminal !== null) why = `${kind} after ${sub.terminal}`;
    else if (sub.cancelSettled) why = `${kind} after the cancel took effect`;
    else if (kind === 'onNext' && sub.delivered >= sub.requested) why = `onNext number ${sub.delivered + 1} of ${sub.requested} requested`;
    if (why) note(`${this.name} does not send ${why}: the publisher rules forbid it`);
    return !why;
  }

  send(sub, kind, args, ruleIfRaises) {
    signalling.push([sub.subscriber, kind]);
    const started = process.hrtime.bigint();
    try {
      call(`subscriber.${kind}(${args.map(show).join(', ')})`, sub.subscriber, kind, args,
        { rule: ruleIfRaises, hangRule: 'async.non-blocking' });
    } finally {
      signalling.pop();
      if (kind === 'onNext') this.onNextS.push(Number(process.hrtime.bigint() - started) / 1e9);
    }
  }

  onRequest(sub, n) {
    if (sub.terminal || sub.cancelled) return;
    if (!positive(n)) {
      const error = new RangeError(`3.9: non-positive request signals are illegal, got ${show(n)}`);
      this.terminate(sub, 'onError', [error]);
    } else if (this.items !== null) this.drain(sub);
  }

  drain(sub) {
    if (this.draining) return;
    this.draining = true;
    try {
      while (sub.terminal === null && !sub.cancelled) {
        if (!this.haveAhead && !this.exhausted) {
          const next = this.items.next();
          this.exhausted = next.done;
          this.haveAhead = !next.done;
          this.ahead = next.value;
        }
        if (!this.haveAhead) {
          if (this.failWith !== null) this.terminate(sub, 'onError', [this.failWith]);
          else this.terminate(sub, 'onComplete', []);
          return;
        }
        if (sub.requested <= sub.delivered) return;
        this.haveAhead = false;
        this.emit(sub, 'onNext', [this.ahead]);
      }
    } finally {
      this.draining = false;
    }
  }
}

class Observer {
  // The white-box hook a subscriber under test reports each processed signal to.
  constructor(name) {
    this.name = name;
    this.processed = [];
  }

  record(kind, args) {
    this.processed.push([kind, args.length ? args[0] : null]);
    log(`${this.name}.${kind}Processed(${args.map(show).join(', ')})`);
  }

  onSubscribeProcessed() { this.record('onSubscribe', []); }

  onNextProcessed(item) { this.record('onNext', [item]); }

  onErrorProcessed(error) { this.record('onError', [error]); }

  onCompleteProcessed() { this.record('onComplete', []); }
}

// -- the scenario's steps ---------------------------------------------------------------------------

function demand(n) {
  // A demand as rstck passes it: above Number.MAX_SAFE_INTEGER, a Number (the default) or a BigInt.
  if (typeof n === 'bigint') return config.demand === 'bigint' ? n : Number(n);
  return n;
}

function make(target, factory, ...args) {
  const at = log(`${factory}(${args.map(show).join(', ')})`);
  if (typeof target[factory] !== 'function') throw new CannotRun(`the module exports no ${factory}()`);
  try {
    return target[factory](...args);
  } catch (error) {
    throw new CannotRun(`#${at} ${factory}() threw ${show(error)}`);
  }
}

async function subscribe(publisher, recorder) {
  call(`publisher.subscribe(${recorder.name})`, publisher, 'subscribe', [recorder], { rule: '1.9' });
  if (!recorder.subscribed) await settle();
}

async function settle() {
  // Until the implementation can do nothing more without the kit (untilQuiet); then a cancel has taken effect.
  const how = await untilQuiet();
  for (const ref of recorders) {
    const recorder = ref.deref();
    if (recorder && recorder.cancelled) recorder.cancelSettled = true;
  }
  for (const sub of kitSubscriptions) if (sub.cancelled) sub.cancelSettled = true;
  note(how === 'idle' ? 'settled' : `settled: ${how}`);
  raisePending();
}

async function awaited(arrived) {
  // Whether an expected signal came (Node settles exactly: what has not come by now needs the kit's input).
  return arrived();
}

async function expect(recorder, what, rule, { count = null, errorType = null } = {}) {
  raisePending();
  if (!recorder.subscribed) fail(rule, 'onSubscribe', 'no onSubscribe arrived');
  if (what === 'elements') {
    if (recorder.received > count) throw new CannotRun(`the target broke its contract: createPublisher(n) makes exactly n elements, ${recorder.name} received ${recorder.received} of ${count}`);
    if (recorder.received !== count) fail(rule, `${count} onNext`, recorder.observed());
  } else if (what === 'complete') {
    if (!recorder.completed) fail(rule, 'onComplete', recorder.observed());
  } else if (what === 'error') {
    if (recorder.completed && recorder.endedUnasked) {
      return note(`${recorder.name}'s stream completed before a request rstck made on a live subscription: there is no answer to judge`);
    }
    if (!recorder.errors.length) fail(rule, `onError(${errorType})`, recorder.observed());
    // rstck names Python's base classes for "any error": every JavaScript error is one of those.
    const any = errorType === 'BaseException' || errorType === 'Exception';
    if (!any && !errorNames(recorder.errors[0]).has(errorType)) fail(rule, `onError(${errorType})`, `onError(${show(recorder.errors[0])})`);
  }
}

async function feed(source, count = 32, { burst = false, afterCancel = 0 } = {}) {
  let sent = 0;
  while (sent < count) {
    const sub = source.subscription;
    if (sub.terminal || sub.cancelSettled) break;
    const items = Array.from({ length: count - sent }, (_, k) => sent + k);
    const went = source.sendAvailable(items, { limit: burst ? null : 1, afterCancel });
    await settle();
    if (!went) break;
    sent += went;
  }
  return sent;
}

async function endStream(source, terminal, { after, ruleIfRaises = '2.13' }) {
  const sent = await feed(source, Math.max(0, after - 1));
  const sub = source.subscription;
  if (sent < after && !sub.cancelled && source.canSignal()) source.sendAvailable([sent], { limit: 1 });
  if (!sub.cancelled && source.canSignal()) {
    if (terminal === 'on_complete') source.sendComplete({ ruleIfRaises });
    else source.sendError(Object.assign(new Error("the kit's source fails on purpose"), { name: 'RuntimeError' }), { ruleIfRaises });
  }
  await settle();
}

async function pump(upstream, downstream, want, items) {
  while (downstream.received < want && !downstream.terminated) {
    if (!upstream.sendAvailable(items, { limit: 1 })) break;
    await settle();
  }
}

async function serveUpstream(upstream, downstream, n) {
  let sent = 0;
  while (sent < n && !downstream.terminated) {
    const items = Array.from({ length: n - sent }, (_, k) => sent + k);
    const went = upstream.sendAvailable(items);
    sent += went;
    if (went) await settle();
    else break;
  }
  await settle();
}

function elements(over, position) {
  const items = over[Symbol.iterator]();
  for (let k = 0; k < position; k += 1) items.next();
  return items;
}

function range(start, stop, step = 1) {
  const items = [];
  for (let k = start; k < stop; k += step) items.push(k);
  return items;
}

// -- what a check judged itself, at its end ------------------------------------------------------------

async function expectServed(recorder, count, rule, { exact, unless }) {
  const ended = unless === 'error' ? recorder.errors.length > 0 : recorder.terminated;
  const served = exact ? recorder.received === count : recorder.received >= count;
  if (!(ended || served)) fail(rule, `${count} onNext, or an end of the stream`, recorder.observed());
}

async function expectRequested(source, rule) {
  const sub = source.subscription;
  if (!(sub.requested > 0)) fail(rule, 'request(n) with n > 0 after onSubscribe', `${sub.requests.map((n) => `request(${show(n)})`).join(', ') || 'no request'} once settled`);
}

async function expectBatchDemand(source, rule) {
  const sub = source.subscription;
  if (sub.delivered >= 4 && sub.requests.length && Math.max(...sub.requests.map(Number)) <= 1) {
    fail(rule, 'requests for more than one element', `${sub.requests.length} requests of 1 for ${sub.delivered} elements`);
  }
}

async function expectOnNextWithin(source, rule) {
  const slowest = Math.max(0, ...source.onNextS);
  if (slowest > config.responsivenessBoundS) fail(rule, `onNext to return within ${config.responsivenessBoundS} s`, `the slowest took ${slowest.toFixed(3)} s`);
}

async function expectCancelled(source, rule, { subscription = null } = {}) {
  const sub = source.pick(subscription);
  if (!sub.cancelled) fail(rule, `cancel() on ${sub.name}`, 'it was left open');
}

async function expectProcessedInOrder(observer, source, rule) {
  const sub = source.subscription;
  const sent = range(0, sub.delivered);
  const processed = observer.processed.filter(([kind]) => kind === 'onNext').map(([, item]) => item);
  const kinds = observer.processed.map(([kind]) => kind);
  const expected = `onSubscribe, then ${sent.length} elements in order, each once`;
  if (kinds[0] !== 'onSubscribe' || kinds.filter((k) => k === 'onSubscribe').length !== 1) fail(rule, expected, `processed ${kinds.slice(0, 3)} first`);
  if (processed.some((item, k) => item !== sent[k])) fail(rule, expected, `processing diverged: processed ${processed.slice(0, 8)}`);
  if (!sub.cancelled && processed.length < sent.length) fail(rule, expected, `only ${processed.length} processed, and it never cancelled`);
  const terminalSent = sub.terminal === 'onComplete' ? ['onComplete'] : [];
  const terminal = kinds.filter((k) => k === 'onComplete' || k === 'onError');
  if (terminal.join() !== terminalSent.join() && !(sub.cancelled && !terminal.length)) fail(rule, 'the terminal signal processed once', `processed ${terminal.join(', ') || 'none'}`);
}

async function expectBoundedRecursion(recorder, rule) {
  if (recorder.received >= 4 && recorder.maxDepth >= recorder.received) fail(rule, 'an upper bound on request -> onNext recursion', `each of ${recorder.received} onNext ran inside the previous one's request (depth ${recorder.maxDepth})`);
}

async function expectDepthOne(recorder, rule) {
  if (recorder.maxDepth > 1) fail(rule, 'onNext never nested in onNext (depth 1)', `depth ${recorder.maxDepth}`);
}

async function expectRequestWithin(recorder, rule) {
  if (recorder.slowestRequestS > config.responsivenessBoundS) fail(rule, `request to return within ${config.responsivenessBoundS} s`, `the slowest took ${recorder.slowestRequestS.toFixed(3)} s`);
}

async function expectCancelWithin(recorder, rule) {
  if ((recorder.cancelTookS || 0) > config.responsivenessBoundS) fail(rule, `cancel to return within ${config.responsivenessBoundS} s`, `it took ${recorder.cancelTookS.toFixed(3)} s`);
}

async function expectErrorExplains(recorder, rule, { words }) {
  const message = recorder.errors.length ? String(recorder.errors[0] && recorder.errors[0].message).toLowerCase() : '';
  if (!words.some((word) => message.includes(word))) fail(rule, 'a message explaining that non-positive requests are illegal', `message ${JSON.stringify(message)}`);
}

async function expectStoppedAfterCancel(recorder, count, rule) {
  const at = recorder.cancelledAt;
  if (at === null || at >= count) return note(`the cancel reached the publisher only after all ${count} elements: nothing to judge`);
  if (recorder.completed || recorder.received >= count) fail(rule, 'the publisher to stop signalling after cancel', `cancelled at onNext ${at} of ${count}, it went on to ${recorder.observed()}`);
  return undefined;
}

function collector() {
  require('v8').setFlagsFromString('--expose-gc');
  return require('vm').runInNewContext('gc');
}

async function expectCollected(alive, name, rule) {
  // 3.13: the recorder, cancelled and let go of by the script, is unreachable while the publisher lives.
  const gc = collector();
  await settle();
  gc();
  await turn();
  gc();
  if (alive.deref() !== undefined) fail(rule, `${name} to be collectable once cancelled`, 'it is still referenced while the publisher is alive');
}

async function expectElements(recorder, items, rule) {
  if (JSON.stringify(recorder.elements) !== JSON.stringify(items)) fail(rule, `the elements ${JSON.stringify(items)}`, `${JSON.stringify(recorder.elements.slice(0, 10))} (${recorder.observed()})`);
}

async function expectElementsSent(recorder, source, rule) {
  const sent = range(0, source.subscription.delivered);
  if (JSON.stringify(recorder.elements) !== JSON.stringify(sent)) fail(rule, `the ${sent.length} elements sent upstream, in order`, `${JSON.stringify(recorder.elements.slice(0, 10))} (${recorder.observed()})`);
}

async function expectWentOnOrFailed(recorder, count, rule) {
  if (!(recorder.errors.length || recorder.completed || recorder.received > count)) fail(rule, 'onError propagated downstream, or a recovery', `downstream heard nothing after the upstream error (${recorder.observed()})`);
}

async function expectNoNull(recorder, rule) {
  if (recorder.nulls) fail(rule, 'the null argument rejected, and not signalled downstream', `${recorder.name} got onNext(null)`);
}

async function expectReturnedNormally(subject, rule, { method }) {
  if (raises.some(([obj, name]) => obj === subject && name === method)) fail(rule, `${method}() to return normally`, `a ${method}() call threw (see the transcript)`);
}
