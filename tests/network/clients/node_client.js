// A conformant client of the zoo in JavaScript: a net.Socket driven by its 'data' events, MessagePack read and
// written by hand from docs/wire-format.md (no package, nothing from the kit), ids as BigInt.
//
//     node tests/network/clients/node_client.js [--id N] [--batch N] URL PUBLISHER
//
// It requests `batch` elements at a time, the next batch once the last has arrived, prints each element as a
// line of lowercase hex, and exits 0 on onComplete, 3 when the stream failed (docs/network.md, the client
// contract). Nagle's algorithm stays on, as a Node socket's default is.
'use strict';

const net = require('net');

const MAX_FRAME_BYTES = 16 * 2 ** 20;
const ID_MAX = 2n ** 63n - 1n;
const INT64_MIN = -(2n ** 63n);
const DRAIN_MS = 2000;
const [CLIENT_HELLO, SERVER_HELLO, SUBSCRIBE, REQUEST, CANCEL, SUBSCRIBED, ON_NEXT, ON_COMPLETE, ON_ERROR,
  ON_NEXT_PACKED, ON_NEXT_PART, ON_NEXT_LAST_PART, GOODBYE] = [...Array(13).keys()];
// Each type's fields, and how many are required (trailing ones with a default may be left out).
const LAYOUTS = new Map([
  [CLIENT_HELLO, [['id', 'ids'], 2]], [SERVER_HELLO, [['id', 'ids'], 2]],
  [SUBSCRIBE, [['str', 'id', 'long'], 2]], [REQUEST, [['id', 'long'], 2]], [CANCEL, [['id'], 1]],
  [SUBSCRIBED, [['id', 'id'], 1]], [ON_NEXT, [['id', 'bin'], 2]], [ON_COMPLETE, [['id'], 1]],
  [ON_ERROR, [['id', 'str'], 2]], [ON_NEXT_PACKED, [['id', 'count', 'bin'], 3]],
  [ON_NEXT_PART, [['id', 'id', 'bin'], 3]], [ON_NEXT_LAST_PART, [['id', 'id', 'bin'], 3]], [GOODBYE, [['str'], 1]],
]);

class Fault extends Error {}
const MORE = Symbol('more');  // the frame has not arrived whole yet
const strict = new TextDecoder('utf-8', { fatal: true });

// -- reading -----------------------------------------------------------------------------------------------

class FrameReader {
  constructor() { this.buffer = Buffer.alloc(0); }

  // The frames `data` completes, up to a fault, and the fault (null if none).
  feed(data) {
    this.buffer = Buffer.concat([this.buffer, data]);
    const frames = [];
    while (this.buffer.length) {
      let parsed;
      try {
        parsed = this.value(0, 0);
        frames.push(checked(parsed.value));
      } catch (e) {
        if (e === MORE) break;
        if (e instanceof Fault) return [frames, e];
        throw e;
      }
      this.buffer = this.buffer.subarray(parsed.end);
    }
    return [frames, null];
  }

  need(end) {
    if (end > MAX_FRAME_BYTES) throw new Fault(`frame-too-large: the frame declares more than ${MAX_FRAME_BYTES} bytes`);
    if (end > this.buffer.length) throw MORE;
  }

  take(at, size) { this.need(at + size); return this.buffer.subarray(at, at + size); }

  uint(at, size) { return this.take(at, size).reduce((acc, byte) => (acc << 8n) | BigInt(byte), 0n); }

  value(at, depth) {
    const first = this.take(at, 1)[0];
    at += 1;
    if (first <= 0x7f) return { value: BigInt(first), end: at };
    if (first >= 0xe0) return { value: BigInt(first - 0x100), end: at };
    if (first >= 0x90 && first <= 0x9f) return this.array(at, first & 0x0f, depth);
    if (first >= 0xa0 && first <= 0xbf) return this.text(at, first & 0x1f);
    if (first >= 0x80 && first <= 0x8f) return this.map(at, first & 0x0f, depth);
    if (first === 0xc1) throw new Fault('malformed: 0xc1 begins no MessagePack value');
    if (first === 0xc0 || first === 0xc2 || first === 0xc3) return { value: { other: 'nil or bool' }, end: at };
    if (first >= 0xcc && first <= 0xcf) {
      const size = 1 << (first - 0xcc);
      return { value: this.uint(at, size), end: at + size };
    }
    if (first >= 0xd0 && first <= 0xd3) {
      const size = 1 << (first - 0xd0);
      return { value: BigInt.asIntN(size * 8, this.uint(at, size)), end: at + size };
    }
    if (first === 0xca || first === 0xcb) return { value: { other: 'float' }, end: at + this.take(at, first === 0xca ? 4 : 8).length };
    if (first >= 0xd4 && first <= 0xd8) return { value: { other: 'ext' }, end: at + this.take(at, 1 + (1 << (first - 0xd4))).length };
    const width = { 0xc4: 1, 0xc5: 2, 0xc6: 4, 0xd9: 1, 0xda: 2, 0xdb: 4, 0xdc: 2, 0xdd: 4, 0xde: 2, 0xdf: 4, 0xc7: 1, 0xc8: 2, 0xc9: 4 }[first];
    const length = Number(this.uint(at, width));
    at += width;
    if (first >= 0xc4 && first <= 0xc6) return { value: Buffer.from(this.take(at, length)), end: at + length };
    if (first >= 0xd9 && first <= 0xdb) return this.text(at, length);
    if (first === 0xdc || first === 0xdd) return this.array(at, length, depth);
    if (first === 0xde || first === 0xdf) return this.map(at, length, depth);
    this.need(at + 1 + length);  // ext 8/16/32: a type byte, then its data
    return { value: { other: 'ext' }, end: at + 1 + length };
  }

  text(at, length) {
    const raw = this.take(at, length);
    try {
      return { value: strict.decode(raw), end: at + length };
    } catch (e) {
      throw new Fault('bad-field: a str that is not valid UTF-8');
    }
  }

  array(at, length, depth) {
    this.need(at + length);  // each value takes a byte at least
    if (depth > 8) throw new Fault('malformed: arrays nested too deep for a frame');
    const values = [];
    for (let i = 0; i < length; i++) {
      const parsed = this.value(at, depth + 1);
      values.push(parsed.value);
      at = parsed.end;
    }
    return { value: values, end: at };
  }

  map(at, length, depth) {
    this.need(at + 2 * length);
    for (let i = 0; i < 2 * length; i++) at = this.value(at, depth + 1).end;
    return { value: { other: 'map' }, end: at };
  }
}

function kindOf(value) {
  if (typeof value === 'bigint') return 'int';
  if (typeof value === 'string') return 'str';
  if (Buffer.isBuffer(value)) return 'bin';
  if (Array.isArray(value)) return 'array';
  return value.other;
}

const FIELD_OK = {
  id: (v) => typeof v === 'bigint' && v >= 0n && v <= ID_MAX,
  count: (v) => typeof v === 'bigint' && v >= 1n && v <= ID_MAX,
  long: (v) => typeof v === 'bigint' && v >= INT64_MIN && v <= ID_MAX,
  str: (v) => typeof v === 'string',
  bin: (v) => Buffer.isBuffer(v),
  ids: (v) => Array.isArray(v) && v.every(FIELD_OK.id),
};

// The frame as [type, ...fields] with trailing defaults filled in; a Fault if the wire format does not allow it.
function checked(value) {
  if (!Array.isArray(value)) throw new Fault(`not-an-array: a frame is an array, this is a ${kindOf(value)}`);
  if (!value.length) throw new Fault('empty-array: a frame without a message type');
  const [type, ...fields] = value;
  if (typeof type !== 'bigint') throw new Fault(`bad-field: the message type is a ${kindOf(type)}`);
  const layout = LAYOUTS.get(Number(type));
  if (type > 12n || layout === undefined) throw new Fault(`unknown-type: message type ${type} is not one of version 0`);
  const [wanted, required] = layout;
  if (fields.length < required || fields.length > wanted.length) {
    throw new Fault(`bad-field: message type ${type} has ${fields.length} fields`);
  }
  fields.forEach((field, i) => {
    if (!FIELD_OK[wanted[i]](field)) throw new Fault(`bad-field: message type ${type} wants a ${wanted[i]}, got a ${kindOf(field)}`);
  });
  while (fields.length < wanted.length) fields.push(0n);
  return [Number(type), ...fields];
}

// -- writing -----------------------------------------------------------------------------------------------

function int(value) {
  const v = BigInt(value);
  if (v >= 0n && v <= 0x7fn) return Buffer.from([Number(v)]);
  if (v < 0n && v >= -32n) return Buffer.from([Number(v) + 0x100]);
  const out = Buffer.alloc(9);
  if (v >= 0n) { out[0] = 0xcf; out.writeBigUInt64BE(v, 1); } else { out[0] = 0xd3; out.writeBigInt64BE(v, 1); }
  return out;
}

function str(text) {
  const raw = Buffer.from(text, 'utf-8');
  if (raw.length < 32) return Buffer.concat([Buffer.from([0xa0 | raw.length]), raw]);
  if (raw.length < 256) return Buffer.concat([Buffer.from([0xd9, raw.length]), raw]);
  const head = Buffer.alloc(3);
  head[0] = 0xda;
  head.writeUInt16BE(raw.length, 1);
  return Buffer.concat([head, raw]);
}

function encode(value) {
  if (typeof value === 'string') return str(value);
  if (Array.isArray(value)) return Buffer.concat([Buffer.from([0x90 | value.length]), ...value.map(encode)]);
  return int(value);
}

const frame = (...values) => encode(values);

// -- the session -------------------------------------------------------------------------------------------

function main() {
  const args = process.argv.slice(2);
  let id = 1n;
  let batch = 3n;
  while (args.length > 2) {
    const option = args.shift();
    if (option === '--id') id = BigInt(args.shift());
    else if (option === '--batch') batch = BigInt(args.shift());
    else { process.stderr.write(`node_client: unknown option ${option}\n`); process.exit(2); }
  }
  const [url, publisher] = args;
  const address = new URL(url);
  const socket = net.connect({ host: address.hostname, port: Number(address.port) });
  const reader = new FrameReader();
  let hello = false;
  let subscribed = false;
  let elementSize = 0n;
  let due = 0n;
  let over = false;
  const parts = new Map();

  const send = (data) => { if (!over && !socket.destroyed) socket.write(data); };
  const request = () => { due = batch; send(frame(REQUEST, id, batch)); };
  const print = (element) => {
    process.stdout.write(element.toString('hex') + '\n');
    due -= 1n;
    if (due <= 0n) request();
  };
  // The end of the session: goodbye (unless answered already), EOF to the server, its EOF awaited (bounded).
  const end = (status, reason) => {
    if (over) return;
    if (reason !== null) socket.write(frame(GOODBYE, reason));
    over = true;
    process.exitCode = status;
    if (status !== 0) process.stderr.write(`node_client: the stream ended without onComplete (${reason})\n`);
    socket.end();
    setTimeout(() => socket.destroy(), DRAIN_MS).unref();
  };
  const fault = (reason) => end(3, reason);
  const sized = (element) => {
    if (elementSize && BigInt(element.length) !== elementSize) {
      fault(`an element of ${element.length} bytes in a stream of ${elementSize}-byte ones`);
      return;
    }
    print(element);
  };

  function take([type, ...fields]) {
    if (type === GOODBYE) {
      send(frame(GOODBYE, 'goodbye acknowledged'));
      end(3, null);
      return;
    }
    if (!hello) {
      if (type !== SERVER_HELLO) return fault(`message type ${type} before the serverHello`);
      if (fields[0] !== 0n) return fault(`unsupported version ${fields[0]}`);  // its subscribe was discarded
      hello = true;
      return;
    }
    if (type === SERVER_HELLO || type === CLIENT_HELLO) return fault('a second hello');
    if (type === SUBSCRIBE) {  // it publishes nothing: subscribed, then onError, as 1.9 has it
      send(Buffer.concat([frame(SUBSCRIBED, fields[1], 0n), frame(ON_ERROR, fields[1], 'nothing is published here')]));
      return;
    }
    if (type === REQUEST || type === CANCEL || fields[0] !== id) return;  // not for its one stream: ignored
    if (type === SUBSCRIBED) {
      if (!subscribed) { subscribed = true; elementSize = fields[1]; request(); }
      return;
    }
    if (!subscribed) return fault(`message type ${type} before subscribed`);
    if (type === ON_COMPLETE) return end(0, 'the stream completed');
    if (type === ON_ERROR) return end(3, 'the stream failed');
    if (type === ON_NEXT) return sized(fields[1]);
    if (type === ON_NEXT_PACKED) {
      const [, count, data] = fields;
      if (!elementSize) return fault('onNextPacked in a stream without element_size');
      if (BigInt(data.length) !== count * elementSize) return fault(`onNextPacked of ${data.length} bytes for ${count} elements`);
      const size = Number(elementSize);
      for (let at = 0; at < data.length && !over; at += size) print(data.subarray(at, at + size));
      return;
    }
    const key = fields[1].toString();
    parts.set(key, [...(parts.get(key) || []), fields[2]]);
    if (type === ON_NEXT_LAST_PART) {
      const element = Buffer.concat(parts.get(key));
      parts.delete(key);
      sized(element);
    }
  }

  socket.on('connect', () => {
    socket.write(Buffer.concat([frame(CLIENT_HELLO, 0n, []), frame(SUBSCRIBE, publisher, id, 0n)]));
  });
  socket.on('data', (data) => {
    if (over) return;  // after its goodbye: read and discarded, until the server's EOF
    const [frames, problem] = reader.feed(data);
    for (const f of frames) {
      if (over) return;
      take(f);
    }
    if (problem && !over) fault(problem.message);
  });
  socket.on('end', () => { if (!over) { over = true; process.exitCode = 3; } socket.destroy(); });
  socket.on('error', (error) => {
    if (!over) { over = true; process.exitCode = 3; process.stderr.write(`node_client: ${error.message}\n`); }
    socket.destroy();
  });
}

main();
