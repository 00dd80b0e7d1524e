"""The reproduction's stages: every module here defines ``STAGES``, a tuple of Stage.

Modules are found by name, in sorted order, so adding an experiment is adding a module.
"""

from __future__ import annotations

import importlib
import pkgutil

from markeval._checks import check_choice
from markeval.reproduce.stage import Stage

__all__ = ["all_stages", "get_stage"]


def all_stages() -> dict[str, Stage]:
    """Every stage by name, in module order then the order each module lists them."""
    found: dict[str, Stage] = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{__name__}.{info.name}")
        for stage in module.STAGES:
            if stage.name in found:
                raise ValueError(f"two stages are named {stage.name!r}")
            found[stage.name] = stage
    return found


def get_stage(name: str) -> Stage:
    """The stage called ``name``; raises naming the known stages."""
    stages = all_stages()
    return stages[check_choice(name, "stage", tuple(stages))]
