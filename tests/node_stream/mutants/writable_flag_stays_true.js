'use strict';
// node.writable.4: the writable flag stays true after end() and destroy().
const { Stream, Writable } = require('../../../rstck/reference/js/streams.js');

class Mutant extends Writable {
  end(...args) {
    const ret = super.end(...args);
    this.writable = true;
    return ret;
  }

  destroy(...args) {
    super.destroy(...args);
    this.writable = true;
  }
}

module.exports = { Stream, createWritable: (options) => new Mutant(options) };
