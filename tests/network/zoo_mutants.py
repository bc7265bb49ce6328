"""Mutants of the conformant zoo's servers (tests/network/conformant_servers/), made as the mutation benchmark
makes them: one line of the source changed, the rest as written. Each is loaded as a package of its own, so the
zoo itself stays untouched in every other test of the run."""

from __future__ import annotations

import dataclasses
import itertools
import pathlib
import sys
import types

ZOO_DIR = pathlib.Path(__file__).parent / "conformant_servers"
_packages = itertools.count()


@dataclasses.dataclass(frozen=True)
class LineMutant:
    file: str  # in ZOO_DIR
    line: int
    before: str  # the part of the line that changes, and what it becomes
    after: str
    item: str  # the item the kit charges it to
    options: tuple = ()  # the server's options, as pairs, when the plain server does not reach the line

    def server(self):
        """A running ThreadedServer of the mutated zoo."""
        module = load_mutated(self.file, self.line, self.before, self.after)
        return module.ThreadedServer(**dict(self.options))


def load_mutated(file: str, line: int, before: str, after: str) -> types.ModuleType:
    """The zoo's threaded server, loaded from its source with `before` made `after` on `file`'s line `line`
    (which must hold it exactly once)."""
    package = f"_zoo_mutant_{next(_packages)}"
    root = types.ModuleType(package)
    root.__path__ = []
    sys.modules[package] = root
    for name in ("codec", "threaded"):  # threaded imports the codec
        lines = (ZOO_DIR / f"{name}.py").read_text().splitlines(keepends=True)
        if f"{name}.py" == file:
            assert lines[line - 1].count(before) == 1, f"{file}:{line} does not hold {before!r} once"
            lines[line - 1] = lines[line - 1].replace(before, after)
        module = types.ModuleType(f"{package}.{name}")
        module.__package__ = package
        module.__file__ = str(ZOO_DIR / f"{name}.py")
        sys.modules[module.__name__] = module
        exec(compile("".join(lines), module.__file__, "exec"), module.__dict__)
        setattr(root, name, module)
    return root.threaded
