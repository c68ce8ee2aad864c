"""The session as collection and the items see it, and where it is kept (``config.stash``).

Declared here, below both ``collect`` and the plugin's hooks, so that neither imports the
other for it: the session (:class:`.session.AgentClinicSession`) implements
:class:`ItemSession`; an item asks it for the executor and reports from the returned
:class:`~.outcome.Outcome`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

import pytest

if TYPE_CHECKING:
    from ..protocols.base import ItemSpec, RunOptions
    from ..protocols.base import Protocol as CaseProtocol
    from .outcome import Outcome
    from .settings import Settings


class Executor(Protocol):
    """Plays an item's encounter and records it."""

    def play(self, item: pytest.Item, spec: ItemSpec) -> Outcome:
        """Wait for the encounter of ``item`` (which plays ``spec``), write its transcript
        and record, and return them."""
        ...


class ItemSession(Protocol):
    """What collection and the items ask of the run's session."""

    @property
    def settings(self) -> Settings:
        """The run's resolved ``--agent-*`` settings."""
        ...

    @property
    def protocol(self) -> CaseProtocol:
        """The run's protocol: it expands cases into items and words their misses."""
        ...

    @property
    def run_options(self) -> RunOptions:
        """What the protocol expands cases with."""
        ...

    @property
    def executor(self) -> Executor:
        """Plays the items."""
        ...


session_key = pytest.StashKey["ItemSession"]()


def session_of(config: pytest.Config) -> ItemSession:
    """The session state registered for ``config``."""
    return config.stash[session_key]
