'use strict';
// 4.2: the processor neither passes an upstream onError on nor recovers: its subscriber hears nothing.
const { IdentityProcessor } = require('../../../rstck/reference/js/reactive_streams.js');

class Swallowing extends IdentityProcessor {
  onError(error) {
    if (error === null || error === undefined) throw new TypeError('2.13: onError(null) is illegal');
    this._upstreamEnded = true;
    this._upstreamState = 'done';
    this._upstream = null;
  }
}

module.exports = { createProcessor: () => new Swallowing() };
