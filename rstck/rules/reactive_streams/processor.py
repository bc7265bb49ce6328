"""Processor rules 4.1-4.2."""
