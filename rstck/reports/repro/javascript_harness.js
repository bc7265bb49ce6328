// ---- Running it (rstck/reports/repro/javascript_harness.js): the scenario runs in a child process that this
// process watches, so that a call that never returns (a loop that never yields) is a verdict too; the module is
// required by its path; settling waits for turns of Node's loop with nothing done and nothing pending. Node's own
// modules only.

const childProcess = require('child_process');
const fs = require('fs');
const path = require('path');
const url = require('url');

const QUIET_TURNS = 3; // turns of Node's loop with nothing done and nothing pending that make the implementation idle
const EXIT_KEPT = 0;
const EXIT_BROKEN = 1;
const EXIT_CANNOT_RUN = 2;
const MARK = '#!'; // lines the scenario writes for the watching process only
const BUILTIN_ERRORS = { Error, TypeError, RangeError, SyntaxError, ReferenceError, EvalError, URIError };

const config = { target: '', rule: '', deadlineS: 5 };
const violations = [];
let seq = 0; // the transcript's line numbers
let depth = 0; // how deeply the line being written is nested in calls
let activity = 0; // what the scenario and the implementation did: settling waits until it stops changing
let loopTurns = 0; // the turns of Node's loop counted so far
let loaded = null; // the module's exports

class Stop extends Error {}
class CannotRun extends Error {}

function out(text) {
  fs.writeSync(1, `${text}\n`); // synchronous: a scenario stuck in a call has still said what it did
}

function show(value) {
  const name = kitName(value);
  if (name) return name;
  if (value === null) return 'null';
  if (value === undefined) return 'undefined';
  if (typeof value === 'bigint') return `${value}n`;
  if (typeof value === 'string') return JSON.stringify(value.slice(0, 40)) + (value.length > 40 ? '…' : '');
  if (value instanceof Error) return `${value.name}(${JSON.stringify(String(value.message).slice(0, 120))})`;
  if (Buffer.isBuffer(value)) return `<Buffer ${JSON.stringify(value.toString('utf8').slice(0, 40))}>`;
  if (Array.isArray(value)) return `[${value.slice(0, 8).map(show).join(', ')}${value.length > 8 ? ', …' : ''}]`;
  if (typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    return `{${Object.entries(value).slice(0, 8).map(([key, v]) => `${key}: ${show(v)}`).join(', ')}}`;
  }
  if (typeof value === 'object' || typeof value === 'function') return `<${className(value)}>`;
  return String(value);
}

function className(value) {
  try {
    return (value.constructor && value.constructor.name) || typeof value;
  } catch (error) {
    return typeof value;
  }
}

function log(text) {
  seq += 1;
  activity += 1;
  out(`${String(seq).padStart(5)}  ${'  '.repeat(depth)}${text}`);
  return seq;
}

function note(text) {
  seq += 1;
  out(`${String(seq).padStart(5)}  ${'  '.repeat(depth)}(${text})`);
}

function violation(rule, expected, observed, stops = true) {
  violations.push({ rule, expected, observed, stops });
  note(`!! ${rule}: ${observed}`);
}

function kitError(name, message) {
  const Ctor = BUILTIN_ERRORS[name] || Error;
  const error = new Ctor(message);
  if (!(name in BUILTIN_ERRORS)) error.name = name;
  return error;
}

let baseline = new Map();

function pendingResources() {
  if (typeof process.getActiveResourcesInfo !== 'function') return [];
  const counts = new Map();
  for (const name of process.getActiveResourcesInfo()) counts.set(name, (counts.get(name) || 0) + 1);
  const pending = [];
  for (const [name, n] of counts) for (let k = (baseline.get(name) || 0); k < n; k += 1) pending.push(name);
  return pending;
}

function turn() {
  return new Promise((resolve) => { setImmediate(resolve); });
}

async function untilQuiet() {
  // Until the implementation can do nothing more without the kit: QUIET_TURNS turns of Node's loop with nothing
  // done and nothing pending (no timer, no I/O), bounded by the check's deadline. How it ended: 'idle' or
  // 'the deadline'.
  const end = Date.now() + config.deadlineS * 1000;
  let quiet = 0;
  let seen = activity;
  for (;;) {
    await turn();
    loopTurns += 1;
    const pending = pendingResources();
    quiet = activity === seen && pending.length === 0 ? quiet + 1 : 0;
    seen = activity;
    if (quiet >= QUIET_TURNS) return 'idle';
    if (Date.now() > end) return 'the deadline';
    if (pending.length && pending.every((name) => name === 'Timeout')) await new Promise((r) => { setTimeout(r, 1); });
  }
}

function report() {
  if (!violations.length) {
    out(`\nkept: ${kept()}`);
    return EXIT_KEPT;
  }
  // One verdict line, the scenario's own rule's violation if it has one; every other violation is a detail after it.
  const verdict = violations.find((v) => v.rule === config.rule) || violations[0];
  out(`\nBROKEN ${verdict.rule}: expected ${verdict.expected}; observed ${verdict.observed}`);
  const others = violations.filter((v) => v !== verdict);
  if (others.length) out(`  and ${others.length} more violation${others.length === 1 ? '' : 's'} in this run:`);
  for (const v of others) out(`    ${v.rule}: expected ${v.expected}; observed ${v.observed}`);
  return EXIT_BROKEN;
}

async function load(spec) {
  const file = path.resolve(spec.replace(/^node(-stream)?:/, ''));
  try {
    return require(file);
  } catch (error) {
    if (error && error.code === 'ERR_REQUIRE_ESM') return import(url.pathToFileURL(file).href);
    throw error;
  }
}

async function play(scenario, spec) {
  let target;
  try {
    target = await load(spec);
  } catch (error) {
    out(`cannot run: ${spec} does not load: ${show(error)}`);
    return EXIT_CANNOT_RUN;
  }
  loaded = target;
  baseline = new Map();
  if (typeof process.getActiveResourcesInfo === 'function') {
    for (const name of process.getActiveResourcesInfo()) baseline.set(name, (baseline.get(name) || 0) + 1);
  }
  process.on('uncaughtException', (error) => note(`uncaught: ${show(error)}`));
  process.on('unhandledRejection', (error) => note(`unhandled rejection: ${show(error)}`));
  out(`reproducing ${config.rule} against ${spec}\n`);
  try {
    await scenario(target);
  } catch (error) {
    if (error instanceof CannotRun) {
      report();
      out(`\ncannot run: ${error.message}`);
      return EXIT_CANNOT_RUN;
    }
    if (!(error instanceof Stop)) {
      report();
      out(`\ncannot run: ${error && error.stack}`);
      return EXIT_CANNOT_RUN;
    }
  }
  return report();
}

function watch(spec) {
  // Run the scenario in a child process and watch its calls: one that has not returned after the check's
  // deadline is a hang, the verdict; so is the process ending inside one.
  const child = childProcess.spawn(process.execPath, [__filename, spec, '--scenario'], { stdio: ['ignore', 'pipe', 'inherit'] });
  let open = null;
  let buffered = '';
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (data) => {
    buffered += data;
    let end;
    while ((end = buffered.indexOf('\n')) >= 0) {
      const line = buffered.slice(0, end);
      buffered = buffered.slice(end + 1);
      if (line.startsWith(`${MARK}call `)) {
        const [rule, ...text] = line.slice(MARK.length + 5).split(' ');
        open = { rule, text: text.join(' '), since: Date.now() };
      } else if (line === `${MARK}done`) open = null;
      else out(line);
    }
  });
  const broken = (observed) => {
    out(`\nBROKEN ${open.rule}: expected ${open.text} to return; observed ${observed}`);
    process.exit(EXIT_BROKEN);
  };
  const watcher = setInterval(() => {
    if (open !== null && Date.now() - open.since > config.deadlineS * 1000) {
      clearInterval(watcher);
      child.kill('SIGKILL');
      broken(`it had not returned after ${config.deadlineS} s`);
    }
  }, 20);
  child.on('close', (code) => {
    clearInterval(watcher);
    if (open !== null) broken(`the Node process ended inside it (exit status ${code})`);
    process.exit(code === null ? EXIT_CANNOT_RUN : code);
  });
}

function main(scenario, settings) {
  Object.assign(config, settings);
  const args = process.argv.slice(2).filter((arg) => arg !== '--scenario');
  const spec = args[0] || config.target;
  if (!process.argv.includes('--scenario')) return watch(spec);
  return play(scenario, spec).then((code) => {
    out(`${MARK}done`);
    process.exit(code); // what the implementation left pending must not keep the verdict waiting
  });
}
