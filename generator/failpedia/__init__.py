"""Failpedia: an encyclopedia of ML training failures, each fix proved by a reproducer."""

__version__ = "0.1.0"
