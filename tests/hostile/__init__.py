"""Hostile implementations the kit must survive: hangs, floods, BaseExceptions, process tampering."""
