"""The Node bridge: the kit's end of a `node driver.js` process (docs/node.md, "How it works").

- driver.js: the Node side; driver.py: where it is, and how a process of it is started.
- channel.py: the descriptors to one process and the newline-delimited JSON spoken over them.
- lifecycle.py: one process from its start to its end (of itself, or stopped by the kit), what it left, and
  the register of processes not yet reaped.
- exchange.py: commands and their replies, their deadlines, and the asks answered meanwhile.
- values.py: the values that cross, tagged where JSON cannot say them; proxies.py: the Python stand-ins of
  JavaScript publishers, subscribers and subscriptions; js_errors.py: JavaScript's errors in Python.
- process.py: `NodeProcess`, one process, composed of the above; pool.py: `NodePool`, processes started ahead.
- errors.py: how the bridge fails (no `node`, a process that ended, a check given up, no reply).
"""
