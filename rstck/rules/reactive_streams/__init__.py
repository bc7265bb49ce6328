"""Checks of the Reactive Streams rules 1.1-4.2, one module per section of the spec."""
