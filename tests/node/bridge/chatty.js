'use strict';
// The reference publisher, telling the console and stdout what it does.
const reference = require('../../../rstck/reference/js/reactive_streams.js');

console.log('chatty loaded');
module.exports = {
  createPublisher(n) {
    console.warn(`making a publisher of ${n}`);
    process.stdout.write('raw output\n');
    return reference.createPublisher(n);
  },
};
