"""JavaScript's errors in Python: each JavaScript error class becomes an exception class named like it, and a
JavaScript stack is read for where it points into the implementation."""

from __future__ import annotations

import os
import threading

from rstck.protocols.node.driver import DRIVER


class JavaScriptError(Exception):
    """An error thrown or signalled by JavaScript code. Each JavaScript error class becomes a subclass named
    like it (RangeError, TypeError, a user's class), so a profile matches it by name; `js_stack` keeps the
    first frames of its stack."""

    js_stack = ""


class JavaScriptThrow(JavaScriptError):
    """JavaScript threw a value that is not an Error (`throw "text"`)."""


_ERROR_CLASSES: dict[tuple[str, ...], type[JavaScriptError]] = {}
_ERROR_LOCK = threading.Lock()


def error_class(chain: tuple[str, ...]) -> type[JavaScriptError]:
    """The Python class standing for a JavaScript error whose name and prototype chain are `chain`, most
    specific first: ("RangeError", "Error") gives RangeError(Error(JavaScriptError))."""
    chain = tuple(name for name in chain if name.isidentifier()) or ("Error",)
    with _ERROR_LOCK:
        known = _ERROR_CLASSES.get(chain)
        if known is not None:
            return known
        base: type[JavaScriptError] = JavaScriptError
        for k in range(len(chain) - 1, -1, -1):
            key = chain[k:]
            cls = _ERROR_CLASSES.get(key)
            if cls is None:
                cls = type(chain[k], (base,), {"__module__": "javascript", "__qualname__": chain[k]})
                _ERROR_CLASSES[key] = cls
            base = cls
        return base


def stack_frame(stack: str) -> str:
    """Where a JavaScript stack points into the implementation: the first frame outside Node's internals
    and the driver, as file:line:column (relative to the working directory when below it)."""
    lines = stack.splitlines()
    if lines and not lines[0].startswith("    at ") and _looks_like_location(lines[0]):
        return _shorter(lines[0])  # a SyntaxError's stack starts with file:line
    for line in lines:
        line = line.strip()
        if not line.startswith("at "):
            continue
        location = line[3:]
        if location.endswith(")") and "(" in location:
            location = location[location.rindex("(") + 1:-1]
        if location.startswith(("node:", "internal/")) or location.startswith(DRIVER):
            continue
        return _shorter(location)
    return ""


def _looks_like_location(text: str) -> bool:
    head, _, line = text.rpartition(":")
    return bool(head) and line.isdigit() and (os.sep in head or head.endswith((".js", ".cjs", ".mjs")))


def _shorter(location: str) -> str:
    location = location.removeprefix("file://")
    cwd = os.getcwd() + os.sep
    return location[len(cwd):] if location.startswith(cwd) else location


def describe_error(error: BaseException) -> str:
    """One line: the error's class and message, and where its stack points into the implementation."""
    message = str(error).splitlines()[0] if str(error) else ""
    where = stack_frame(getattr(error, "js_stack", "") or "")
    text = f"{type(error).__name__}({message[:200]!r})"
    return f"{text} at {where}" if where else text
