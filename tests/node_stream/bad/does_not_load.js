'use strict';
// A module that throws while it loads.

throw new Error('this module does not load');
