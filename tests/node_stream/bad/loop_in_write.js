'use strict';
// A writable whose write() never returns.
const reference = require('../../../rstck/reference/js/streams.js');

module.exports = {
  createWritable(options) {
    const writable = reference.createWritable(options);
    writable.write = () => { for (;;) { /* never returns */ } };
    return writable;
  },
};
