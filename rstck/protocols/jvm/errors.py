"""Java exceptions in Python, and the kit's exceptions in Java.

Each Java throwable class becomes a Python exception class named like it, over the stand-ins of its superclasses
(NullPointerException(RuntimeException(Exception(Throwable(JavaThrowable))))), so a profile matches it by name.
An exception the kit's Java-facing objects raise on purpose is thrown in Java as a real Java exception: the one it
stands for, else the one the rules name for its Python type."""

from __future__ import annotations

import threading
from typing import Any


class JavaThrowable(Exception):
    """A Java throwable thrown or signalled by the implementation; `java_object` is the throwable itself."""

    java_class = "java.lang.Throwable"
    java_object: Any = None


_CLASSES: dict[tuple[str, ...], type[JavaThrowable]] = {}
_LOCK = threading.Lock()

# The Java exception a Python exception of the kit's is thrown as, by Python type (the rules' names: 1.9, 2.13,
# 3.9); anything else is a RuntimeException.
JAVA_FOR_PYTHON = {TypeError: "java.lang.NullPointerException", ValueError: "java.lang.IllegalArgumentException"}


def error_class(chain: list[tuple[str, str]]) -> type[JavaThrowable]:
    """The Python class for a Java class chain of (simple name, full name), most specific first."""
    key = tuple(full for _, full in chain)
    with _LOCK:
        base: type[JavaThrowable] = JavaThrowable
        for k in range(len(chain) - 1, -1, -1):
            cls = _CLASSES.get(key[k:])
            if cls is None:
                simple = chain[k][0] if chain[k][0].isidentifier() else "Throwable"
                cls = type(simple, (base,), {"__module__": "java", "__qualname__": simple, "java_class": key[k]})
                _CLASSES[key[k:]] = cls
            base = cls
        return base


def from_java(bridge: Any, throwable: Any) -> JavaThrowable:
    """The Python stand-in of a Java throwable."""
    described = bridge.throwableChain(throwable)
    classes, _, message = described.partition("\n\n")
    chain = [tuple(line.split(" ", 1)) for line in classes.splitlines() if " " in line]
    error = error_class(chain or [("Throwable", "java.lang.Throwable")])("" if message == "null" else message)
    error.java_object = throwable
    return error


def raised_in_call(bridge: Any, exc: BaseException) -> BaseException:
    """What a Java call's failure becomes in Python: the implementation's throwable as its stand-in; a failure of
    py4j itself stays as it is (the bridge broke: the adapter's error, not the target's)."""
    from py4j.protocol import Py4JJavaError

    if isinstance(exc, Py4JJavaError):
        return from_java(bridge, exc.java_exception)
    return exc


def thrown_in_java(bridge: Any, exc: BaseException) -> BaseException:
    """The exception a Java-facing object of the kit's raises so that Java gets a real Java exception."""
    from py4j.protocol import Py4JJavaError

    throwable = getattr(exc, "java_object", None)
    if throwable is None:
        kind = next((java for python, java in JAVA_FOR_PYTHON.items() if isinstance(exc, python)),
                    "java.lang.RuntimeException")
        throwable = bridge.throwable(kind, f"{type(exc).__name__}: {exc}")
    return Py4JJavaError(str(exc), throwable)
