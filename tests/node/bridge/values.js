'use strict';
// A stand-in whose methods show what crossed the bridge: the kit's own tests of the codec.
class Oops extends TypeError {}

const probe = {
  subscribe() {},
  echo: (value) => value,
  describe: (value) => `${typeof value}:${String(value)}`,
  isBuffer: (value) => Buffer.isBuffer(value),
  fromJavaScript: () => ({
    big: 2n ** 70n, undef: undefined, nan: NaN, inf: -Infinity, buf: Buffer.from('hi'), arr: [1, 'a', null],
    obj: new Map(), date: 1.5,
  }),
  throwRange: () => { throw new RangeError('out of range'); },
  throwOwn: () => { throw new Oops('my own class'); },
  throwText: () => { throw 'just text'; }, // eslint-disable-line no-throw-literal
  log: (text) => { console.log('logged:', text); process.stdout.write(`raw ${text}\n`); },
  callNext: (subscriber, value) => subscriber.onNext(value),
  callAndCatch: (subscriber) => {
    try { subscriber.onNext(1); return 'returned'; } catch (err) { return `caught ${err.name}: ${err.message}`; }
  },
};

module.exports = { createPublisher: () => probe };
