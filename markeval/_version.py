"""The library version, in a module of its own so that any module can read it without
importing the package root (which imports every metric)."""

__version__ = "0.1.0"
