"""Adapters: one module per kind of implementation the kit can test.

`inprocess`: Python objects in this process (synchronous, threaded or asyncio); `spark`:
implementations backed by Spark DataFrames (imports pyspark only when a session starts); `network`:
a server (tcp://HOST:PORT) or a client command of the network protocol; `node`: a JavaScript module
(node:PATH) driven in `node` processes. Each adapter is a `rstck.core.target.Target` subclass; the rules
never import adapters.
"""
