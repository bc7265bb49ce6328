"""Subscriber rules 2.1-2.13."""
