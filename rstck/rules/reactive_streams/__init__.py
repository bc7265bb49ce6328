"""Checks of the Reactive Streams rules 1.1-4.2, one module per section of the spec."""

# A long stream, for the checks whose defects show only past some length: CPython shares one int object for each
# of -5..256, so a count compared with `is` instead of `==` stops matching only beyond 256; and a demand capped at
# a small fixed number stalls only past that number.
SMALL_INT_CACHE_END = 256
LONG_STREAM = 300
