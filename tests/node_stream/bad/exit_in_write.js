'use strict';
// A writable whose write() ends the process.
const reference = require('../../../rstck/reference/js/streams.js');

module.exports = {
  createWritable(options) {
    const writable = reference.createWritable(options);
    writable.write = () => process.exit(3);
    return writable;
  },
};
