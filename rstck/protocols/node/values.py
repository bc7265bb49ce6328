"""The values that cross the bridge, both ways (docs/node.md, "Values across the bridge").

JSON carries plain values; what it cannot say travels tagged: an int beyond Number.MAX_SAFE_INTEGER, NaN and
the infinities, bytes, undefined, an Error, one of the implementation's objects (a handle, for which Python
gets a stand-in: rstck.protocols.node.proxies) and one of the kit's (a kit id, under which the object is held
for as long as JavaScript may call it).
"""

from __future__ import annotations

import base64
import dataclasses
import itertools
import math
import weakref
from typing import Any, Callable

from rstck.protocols.node.js_errors import JavaScriptThrow, error_class
from rstck.protocols.node.proxies import fitted, proxy_class

MAX_SAFE_INTEGER = 2**53 - 1


@dataclasses.dataclass(frozen=True)
class JSValue:
    """A JavaScript value the bridge does not copy (a class instance, a function, a symbol): its kind."""

    kind: str
    text: str = ""

    def __repr__(self) -> str:
        return f"<{self.kind}{' ' + self.text if self.text else ''}>"


class HeldByJavaScript(dict):
    """The kit's objects the JavaScript side may still call, by kit id: a Python object stays here until
    the driver's collector finds JavaScript no longer references it (3.13 reads this name)."""


def kit_role(value: Any) -> str:
    if isinstance(value, BaseException):
        return "error"
    if callable(getattr(value, "on_next_processed", None)):
        return "observer"
    if callable(getattr(value, "on_subscribe", None)) or callable(getattr(value, "on_next", None)):
        return "subscriber"
    if callable(getattr(value, "request", None)):
        return "subscription"
    if callable(getattr(value, "subscribe", None)):
        return "publisher"
    return "object"


class ValueCodec:
    """The values of one driver process. `owner` is what the stand-ins of its JavaScript objects call through
    (the NodeProcess)."""

    def __init__(self, owner: Any):
        self.owner = owner
        self.demand_as = "number"  # what a demand beyond Number.MAX_SAFE_INTEGER becomes: a Number, or a BigInt
        self.release: list[str] = []  # handles of stand-ins Python dropped, sent with the next command
        self._kit: dict[str, Any] = HeldByJavaScript()
        self._kit_ids: dict[int, tuple[str, Callable[[], Any]]] = {}
        self._kit_count = itertools.count(1)
        self._proxies: weakref.WeakValueDictionary[str, Any] = weakref.WeakValueDictionary()

    def forget(self) -> None:
        """The driver dropped every handle (a reset): so does Python."""
        self._kit.clear()
        self._kit_ids.clear()
        self._proxies = weakref.WeakValueDictionary()
        self.release = []

    # -- to JavaScript -----------------------------------------------------------------------------

    def encode(self, value: Any, *, demand: bool = False) -> Any:
        """A Python value as the driver decodes it. Ints beyond Number.MAX_SAFE_INTEGER travel as text, and
        become a Number (a demand, by default: docs/node.md) or a BigInt."""
        if value is None or isinstance(value, (bool, str)):
            return value
        if isinstance(value, int):
            if -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER:
                return value
            return {"$bigint": str(value), "as": self.demand_as if demand else "bigint"}
        if isinstance(value, float):
            if math.isfinite(value):
                return value
            return {"$number": "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")}
        if isinstance(value, (bytes, bytearray, memoryview)):
            return {"$b64": base64.b64encode(bytes(value)).decode("ascii")}
        handle = getattr(value, "_js_handle", None)
        if handle is not None and getattr(value, "_js_process", None) is self.owner:
            return {"$ref": handle}
        if isinstance(value, (list, tuple)):
            return [self.encode(v) for v in value]
        if isinstance(value, dict) and all(isinstance(k, str) for k in value):
            return {k: self.encode(v) for k, v in value.items()}
        return self._kit_spec(value)

    def _kit_spec(self, value: Any) -> dict[str, Any]:
        """The kit's own object (a probe, a subscription it hands out, an error it signals), held here for
        as long as JavaScript may call it."""
        known = self._kit_ids.get(id(value))
        if known is not None and known[1]() is value and known[0] in self._kit:
            kit = known[0]
        else:
            kit = f"k{next(self._kit_count)}"
            try:
                ref: Callable[[], Any] = weakref.ref(value)
            except TypeError:
                ref = (lambda o: lambda: o)(value)
            self._kit_ids[id(value)] = (kit, ref)
            self._kit[kit] = value
        spec: dict[str, Any] = {"$kit": kit, "role": kit_role(value), "label": getattr(value, "name", "") or kit}
        if isinstance(value, BaseException):
            spec.update(name=type(value).__name__, message=str(value))
        return spec

    def kit_object(self, kit: str) -> Any:
        return self._kit.get(kit)

    def released(self, kits: list[str]) -> None:
        """JavaScript no longer references these kit objects (its collector found them unreachable)."""
        for kit in kits:
            value = self._kit.pop(kit, None)
            if value is not None:
                known = self._kit_ids.get(id(value))
                if known is not None and known[0] == kit:
                    del self._kit_ids[id(value)]

    # -- from JavaScript ---------------------------------------------------------------------------

    def decode(self, value: Any, *, role: str = "") -> Any:
        if isinstance(value, list):
            return [self.decode(v) for v in value]
        if not isinstance(value, dict):
            return value
        if "$undefined" in value:
            return None
        if "$number" in value:
            return float(value["$number"].replace("Infinity", "inf"))
        if "$bigint" in value:
            return int(value["$bigint"])
        if "$b64" in value:
            return base64.b64decode(value["$b64"])
        if "$error" in value:
            return self.error(value)
        if "$kit" in value:
            return self._kit.get(value["$kit"])
        if "$ref" in value:
            return self.proxy(value, role)
        if "$object" in value:
            return JSValue(value["$object"], value.get("text", ""))
        return {k: self.decode(v) for k, v in value.items()}

    def error(self, spec: dict[str, Any]) -> BaseException:
        cls = error_class(tuple(spec.get("chain") or (spec.get("$error") or "Error",)))
        error = cls(spec.get("message", ""))
        error.js_stack = spec.get("stack", "")
        return error

    def thrown(self, spec: Any) -> BaseException:
        """What JavaScript threw, as a Python exception (a non-Error value wrapped)."""
        value = self.decode(spec)
        if isinstance(value, BaseException):
            return value
        return JavaScriptThrow(f"threw a non-Error value: {value!r}"[:200])

    def proxy(self, spec: dict[str, Any], role: str = "") -> Any:
        """The stand-in of the JavaScript object `spec` names: one per handle, for every role it plays."""
        handle = spec["$ref"]
        known = self._proxies.get(handle)
        if known is not None:
            return fitted(known, role, spec.get("methods", ()))  # one object may play several roles
        made = proxy_class(role, spec.get("methods", ()))(self.owner, handle, spec.get("class", ""))
        self._proxies[handle] = made
        weakref.finalize(made, self.release.append, handle)
        return made
