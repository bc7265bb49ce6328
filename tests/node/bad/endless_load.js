'use strict';
// Never finishes loading.
for (;;) { /* spins at load time */ }
