"""How a check's trace names objects: a kit probe by its own name, anything else by its kind and a number that
stays the same for the object's life (`sub#1`, `MyPublisher#2`); and the legend that says, under a trace, what
each name stands for, with the class of each object of the implementation's beside it.

Whose an object is decides how it is named. An object of a class outside the kit is the implementation's. An
object of the kit's own classes is the kit's, unless it stands in for an object of the implementation's that lives
elsewhere (a proxy for a JavaScript object in a Node process): such a stand-in says so with a method
`stands_for_class()`, which returns the short and the full name of the class of what it stands for
(`("Range", "JavaScript class Range")`). Every adapter's stand-ins are named through this one rule."""

from __future__ import annotations

import itertools
import re
import weakref
from typing import Any, Callable

from rstck.core.probes import ProbePublisher, ProbeSubscriber


# What the kit's own names stand for (docs/verdicts.md, "Reading a trace"): by the name's prefix.
KIT_NAMES = {
    "probe": "a subscriber of the kit's: it records every signal it gets and checks it against the rules",
    "source": "a publisher of the kit's: it feeds the subscriber or processor under test",
    "observer": "the kit's observer, which a white-box subscriber tells what it has processed",
    "sub": "a subscription of the kit's, which a source handed the implementation",
}
# What names of the implementation's objects stand for, when their prefix says more than their class.
IMPLEMENTATION_NAMES = {
    "sub": "the implementation's subscription, which it handed a probe",
    "publisher": "the publisher under test, as the trace names it where the kit calls it",
}
_NAME = re.compile(r"(?<![\w#])[A-Za-z_]\w*(?:#\d+)?(?![\w#])")


def _of_the_kit(kind: type) -> bool:
    """Whether objects of `kind` are of the kit's own classes (its probes, an adapter's stand-ins), not an
    implementation's (the shipped reference implementations are implementations like any other)."""
    module = kind.__module__
    return module.startswith("rstck.") and not module.startswith("rstck.reference")


def qualified_name(kind: type) -> str:
    return f"{kind.__module__}.{kind.__qualname__}"


def implementation_class(obj: Any) -> tuple[str, str] | None:
    """The short and the full name of the implementation's class that `obj` is an object of, or stands in for
    (`("Range", "class mypkg.Range")`); None for the kit's own objects. Only the kit's classes are asked for
    `stands_for_class`: an implementation's object is never asked anything."""
    kind = type(obj)
    if not _of_the_kit(kind):
        return kind.__name__, f"class {qualified_name(kind)}"
    stands_for = getattr(kind, "stands_for_class", None)
    return stands_for(obj) if stands_for is not None else None


class Labels:
    """The names of one check's objects."""

    def __init__(self) -> None:
        self.classes: dict[str, str] = {}  # the class of each object of the implementation's ("class m.C"), by name
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
        implementations = implementation_class(obj)
        label = self.fresh(prefix or (implementations[0] if implementations else type(obj).__name__))
        if implementations is not None:
            self.classes[label] = implementations[1]
        try:
            ref = weakref.ref(obj)
        except TypeError:  # not weakly referenceable: a strong reference is the only way to keep the name
            ref = (lambda o: lambda: o)(obj)
        self._labels[id(obj)] = (label, ref)
        return label

    def call_as(self, name: str, obj: Any) -> None:
        """The trace names `obj` `name` where the kit calls it (the publisher under test is "publisher")."""
        implementations = implementation_class(obj)
        if implementations is not None:
            self.classes.setdefault(name, implementations[1])

    def legend(self, trace: str) -> str:
        """What the names in `trace` stand for, one line each: the kit's own by what they are, the
        implementation's by their class."""
        lines = []
        for name in dict.fromkeys(match.group(0) for match in _NAME.finditer(trace)):
            prefix, kind = name.split("#")[0], self.classes.get(name)
            if kind is not None:
                text = f"{IMPLEMENTATION_NAMES.get(prefix, 'an object of the implementation')} ({kind})"
            elif "#" in name and prefix in KIT_NAMES:
                text = KIT_NAMES[prefix]
            else:
                continue
            lines.append(f"{name:<12} {text}")
        return "\n".join(lines)
