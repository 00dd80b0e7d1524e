"""Renamed keywords keep working for a while, with a warning that names the new one."""

from __future__ import annotations

import functools
import warnings


def renamed_keywords(**renames: str):
    """Decorator: accept each old keyword in ``renames`` (old → new) with a ``DeprecationWarning``.

    Passing both the old and the new keyword is refused, naming both.

    Examples
    --------
    >>> @renamed_keywords(n_samples="n_resamples")
    ... def resample(*, n_resamples=10):
    ...     return n_resamples
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     resample(n_samples=3)
    3
    >>> print(caught[0].message)
    resample(n_samples=...) is deprecated; use n_resamples=...
    """

    def decorate(function):
        @functools.wraps(function)
        def wrapper(*args, **kwargs):
            for old, new in renames.items():
                if old not in kwargs:
                    continue
                if new in kwargs:
                    raise TypeError(
                        f"{function.__name__}() got both {old}= (deprecated) and {new}=; pass {new}= only"
                    )
                warnings.warn(
                    f"{function.__name__}({old}=...) is deprecated; use {new}=...",
                    DeprecationWarning,
                    stacklevel=2,
                )
                kwargs[new] = kwargs.pop(old)
            return function(*args, **kwargs)

        return wrapper

    return decorate
