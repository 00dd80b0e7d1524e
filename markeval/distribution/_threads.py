"""Kept so that old imports work: the helper moved to :mod:`markeval._threads`."""

from markeval._threads import single_threaded_blas

__all__ = ["single_threaded_blas"]
