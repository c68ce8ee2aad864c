"""The response cache's modes, apart from the cache: declaring ``--agent-cache`` (in every
pytest run, agents or not) imports nothing of the cache itself."""

from __future__ import annotations

import enum


class CacheMode(str, enum.Enum):
    """How the cache is used (the ``--agent-cache`` values)."""

    READ_WRITE = "read-write"
    REPLAY = "replay"
    REFRESH = "refresh"
    OFF = "off"


#: The ``--agent-cache`` values, in the order ``--help`` lists them.
CACHE_MODES = tuple(mode.value for mode in CacheMode)
