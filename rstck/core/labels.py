"""How a check's trace names objects: a kit probe by its own name, anything else by its kind and a number that
stays the same for the object's life (`sub#1`, `MyPublisher#2`)."""

from __future__ import annotations

import itertools
import weakref
from typing import Any, Callable

from rstck.core.probes import ProbePublisher, ProbeSubscriber


class Labels:
    """The names of one check's objects."""

    def __init__(self) -> None:
        # Labels by id(); the weak reference tells a live object from a later one at the same address,
        # without keeping anything alive (3.13 needs the subscriber collectable).
        self._labels: dict[int, tuple[str, Callable[[], Any]]] = {}
        self._numbers: dict[str, itertools.count] = {}

    def fresh(self, prefix: str) -> str:
        """A name not given before in this check: `prefix#1`, `prefix#2`, ..."""
        counter = self._numbers.setdefault(prefix, itertools.count(1))
        return f"{prefix}#{next(counter)}"

    def of(self, obj: Any, prefix: str | None = None) -> str:
        """How the trace names `obj`: a kit probe by its name, anything else by `prefix` (its class by
        default) and a number that stays the same for the object's life."""
        if isinstance(obj, (ProbeSubscriber, ProbePublisher)):
            return obj.name
        known = self._labels.get(id(obj))
        if known is not None and known[1]() is obj:
            return known[0]
        label = self.fresh(prefix or type(obj).__name__)
        try:
            ref = weakref.ref(obj)
        except TypeError:  # not weakly referenceable: a strong reference is the only way to keep the name
            ref = (lambda o: lambda: o)(obj)
        self._labels[id(obj)] = (label, ref)
        return label
