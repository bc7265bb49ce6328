'use strict';
// A readable that keeps a timer alive for ever: the driver is never idle.
const reference = require('../../../rstck/reference/js/streams.js');

module.exports = {
  createReadable(chunks) {
    setInterval(() => {}, 5);
    return reference.createReadable(chunks);
  },
};
