"""numpy imported where it is first used, not where the report modules are imported.

The plugin imports the report modules when it configures a run (gate settings, table
types), but only the process that writes the final reports computes anything with numpy:
xdist workers and ``--collect-only`` never do. numpy's import is ~40 ms of CPU in each of
them (``benchmarks/bench_10k.py``, collection). A report module writes
``from ..core.lazy import numpy as np``: :data:`numpy` is the lazy stand-in at run time and
numpy itself to the type checker.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any


class LazyModule:
    """Stands for a module and imports it on the first attribute read from it."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attribute: str) -> Any:
        value = getattr(importlib.import_module(self._name), attribute)
        # Kept: the next read of it is a plain attribute read.
        setattr(self, attribute, value)
        return value

    def __repr__(self) -> str:
        return f"<lazily imported module {self._name!r}>"


if TYPE_CHECKING:
    import numpy as numpy
else:
    #: numpy, imported on first use.
    numpy = LazyModule("numpy")
