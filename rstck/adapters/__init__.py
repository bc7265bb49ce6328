"""Adapters: one module per kind of implementation the kit can test.

`inprocess`: Python objects in this process (synchronous, threaded or asyncio). Each adapter
is a `rstck.target.Target` subclass; the rules never import adapters.
"""
