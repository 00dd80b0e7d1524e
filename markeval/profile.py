"""The run profile: ``ci`` (small, fast; the default) or ``full`` (the papers' sizes).

Chapters and experiments read ``MARKEVAL_PROFILE`` through :func:`current_profile`
and size their data with :func:`by_profile`, so one switch moves the whole book
between a quick check and a full reproduction.
"""

from __future__ import annotations

import os

from markeval._checks import check_choice

PROFILES = ("ci", "full")


def current_profile() -> str:
    """Return the active profile from ``$MARKEVAL_PROFILE`` (default ``"ci"``).

    Examples
    --------
    >>> import os
    >>> os.environ.pop("MARKEVAL_PROFILE", None) and None
    >>> current_profile()
    'ci'
    """
    value = os.environ.get("MARKEVAL_PROFILE", "ci").strip().lower() or "ci"
    return check_choice(value, "MARKEVAL_PROFILE", PROFILES)


def by_profile(*, ci, full):
    """Return ``ci`` or ``full`` according to the active profile.

    Examples
    --------
    >>> import os
    >>> os.environ["MARKEVAL_PROFILE"] = "full"
    >>> by_profile(ci=1_000, full=10_000)
    10000
    >>> del os.environ["MARKEVAL_PROFILE"]
    """
    return full if current_profile() == "full" else ci
