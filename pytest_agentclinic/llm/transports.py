"""The ``--agent-transport`` values, apart from the caller so that declaring the option
imports nothing of the transport itself."""

from __future__ import annotations

#: ``auto`` takes the aiohttp fast path where it applies, ``litellm`` sends every call
#: through litellm.
TRANSPORTS = ("auto", "litellm")
