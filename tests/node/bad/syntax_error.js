'use strict';
// Does not load: a syntax error on line 4.
module.exports = {
  createPublisher(n) { return n +; },
};
