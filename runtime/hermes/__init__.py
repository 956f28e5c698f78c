"""Hermes runtime: a declarative, config-driven AI agent runtime."""

__version__ = "0.1.0"
