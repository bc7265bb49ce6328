"""Conformant zoo: correct Reactive Streams implementations in many real-world styles."""
