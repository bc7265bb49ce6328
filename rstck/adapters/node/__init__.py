"""The Node adapter: JavaScript Reactive Streams implementations, driven through a `node` process (docs/node.md).

`rstck check node:./impl.js` checks the factories the module exports (createPublisher(n),
createFailedPublisher(), createSubscriber(), createWhiteboxSubscriber(observer), createProcessor()) under
every Reactive Streams rule, with the JavaScript profile. `target.NodeTarget` is the target; the bridge to
the `node` processes (the driver, its protocol, the pool, the Python stand-ins of JavaScript objects) is
`rstck.protocols.node`.

`rstck check node-stream:./streams.js` checks Node streams (createReadable, createWritable, createFilter,
createDuplex, createStream, createJsgiStream) under the Node stream contract and the JSGI stream extension:
`streams.NodeStreamTarget`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rstck.core.plugins import Adapter

if TYPE_CHECKING:  # importing this package stays light: it is the plug-in's description
    from rstck.adapters.node.target import NodeTarget

NODE_PREFIX = "node:"
NODE_STREAM_PREFIX = "node-stream:"

ADAPTER = Adapter(
    name="node",
    schemes=(NODE_PREFIX, NODE_STREAM_PREFIX),
    loader="rstck.adapters.node:node_target",
    describes="node:PATH for a JavaScript module, node-stream:PATH for JavaScript Node streams (docs/node.md)",
    reproducers={NODE_PREFIX: "javascript", NODE_STREAM_PREFIX: "node-stream"},
)

__all__ = ["ADAPTER", "NODE_PREFIX", "NODE_STREAM_PREFIX", "NodeTarget", "node_target"]


def __getattr__(name: str):
    if name == "NodeTarget":  # `from rstck.adapters.node import NodeTarget`, loaded only when asked for
        from rstck.adapters.node.target import NodeTarget

        return NodeTarget
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def node_target(spec: str) -> NodeTarget | None:
    """The Node target `spec` names (node:PATH, node-stream:PATH), or None if it names none."""
    if spec.startswith(NODE_STREAM_PREFIX):
        from rstck.adapters.node.streams import NodeStreamTarget

        return NodeStreamTarget(spec[len(NODE_STREAM_PREFIX):], name=spec)
    if not spec.startswith(NODE_PREFIX):
        return None
    from rstck.adapters.node.target import NodeTarget

    return NodeTarget(spec[len(NODE_PREFIX):], name=spec)
