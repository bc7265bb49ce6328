"""The in-process adapter: Python publishers, subscribers and processors, made by factories of a Target that the
user's module builds (`rstck check mypkg.tck:target`; `target.InProcessTarget`)."""

from __future__ import annotations

from rstck.core.plugins import Adapter

ADAPTER = Adapter(name="inprocess", describes="MODULE:ATTR (e.g. mypkg.tck:target), a target your module builds",
                  reproducers={"": "python"}, exports={"InProcessTarget": "rstck.adapters.inprocess.target"})


def __getattr__(name: str):
    if name == "InProcessTarget":  # loaded only when asked for: the plug-in's description stays light
        from rstck.adapters.inprocess.target import InProcessTarget

        return InProcessTarget
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
