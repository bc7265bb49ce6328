"""Specification Changes (jsgi.spec.*): requirements on a JSGI server's request and response objects."""

from __future__ import annotations

from rstck.core.checks import untested

_SERVER = ("concerns a JSGI server's {}, not a stream object: rstck checks the streams createJsgiStream() makes and "
           "runs no JSGI server")
untested("jsgi.spec.1", _SERVER.format("request.input"))
untested("jsgi.spec.2", _SERVER.format("response.body"))
untested("jsgi.spec.3", _SERVER.format("request.jsgi.error"))
untested("jsgi.spec.4", _SERVER.format("request.jsgi.stream"))
