"""The values of ``--agent-cache`` and ``--agent-transport``, apart from the cache and the
transports: declaring the options (in every pytest run, agents or not) imports nothing of
what they choose."""

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

#: The ``--agent-transport`` values: ``auto`` takes the HTTP fast path where it applies,
#: ``litellm`` sends every call through litellm.
TRANSPORTS = ("auto", "litellm")
