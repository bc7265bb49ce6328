"""A Reactive Streams range publisher."""
