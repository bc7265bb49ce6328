"""The threading-style matrix: conformant publishers, subscribers and processors composed from independent choices
(where signals are delivered, how the subscription is guarded, where on_subscribe is signalled, what a request
does), and the same styles with a classic defect injected (docs/testing.md, "The threading-style matrix")."""
