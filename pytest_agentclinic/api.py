"""The public extension API: what a ``conftest.py`` or a plugin needs to add an agent or a
protocol. Everything here is stable; the modules it comes from are not.

**Adding an agent.** Implement the hook in a conftest::

    from pytest_agentclinic.api import Reply

    class Oracle:
        model = "oracle"
        prompt_version = "1"
        async def respond(self, view):
            return Reply("DIAGNOSIS READY: " + view.case.diagnosis)

    def pytest_agentclinic_make_agent(role, model, case, bias, config):
        return Oracle() if role == "doctor" else None

The hook is asked for every role of the run's protocol; what it returns must implement the
role's interface (:func:`role_interfaces`), or the item ends as an error naming the role.

**Adding a protocol.** Subclass :class:`Protocol` (its options, its roles, :meth:`~Protocol.
expand` a file's cases into items, :meth:`~Protocol.play` an item into a :class:`Transcript`,
optionally its report :meth:`~Protocol.tables`), then :func:`register_protocol` it and run
``pytest --agent-protocol=<name>``. Its records, reports, ``agentclinic compare`` and the gate
work as for the built-in protocols. A conftest that declares options also calls
:func:`add_protocol_options` from its ``pytest_addoption``.
"""

from __future__ import annotations

from typing import Any

from .core.case import Case
from .core.options import Option
from .core.records import ResultRecord
from .core.roles import OFFLINE, Agent, Judgement, Moderator, Reply, TurnView
from .core.transcript import ItemHeader, Transcript, Usage, Utterance, Verdict
from .grading.moderator import OfflineModerator
from .grading.pipeline import Grade, grade_answer, grade_choice
from .plugin.settings import add_options
from .protocols.agentclinic import settled
from .protocols.base import ItemSpec, PlayContext, Protocol, RoleSpec, RunOptions
from .protocols.registry import get as get_protocol
from .protocols.registry import names as protocol_names
from .protocols.registry import register as register_protocol
from .report.tables import Table

__all__ = [
    "OFFLINE", "Agent", "Case", "Grade", "ItemHeader", "ItemSpec", "Judgement", "Moderator",
    "Option", "PlayContext", "Protocol", "Reply", "ResultRecord", "RoleSpec", "RunOptions",
    "Table", "Transcript", "TurnView", "Usage", "Utterance", "Verdict", "add_protocol_options",
    "get_protocol", "grade_free_response", "grade_multiple_choice", "protocol_names",
    "register_protocol", "role_interfaces", "settled",
]

#: Grade a multiple-choice answer (letter, option text or paraphrase) against the truth.
grade_multiple_choice = grade_choice


async def grade_free_response(answer: str, case: Case, moderator: Moderator | None = None,
                              sample: int = 0) -> Grade:
    """Grade a free-text final answer against ``case`` through the pipeline both built-in
    protocols use: extraction (single / multiple / none), the rules, and ``moderator`` (a
    model, or a conftest's) for what the rules cannot decide; offline by default."""
    return await grade_answer(answer, case, moderator or OfflineModerator(), sample)


def role_interfaces(protocol: str) -> dict[str, type]:
    """Each role of ``protocol`` and the interface its agent must implement."""
    return {role.name: role.interface for role in get_protocol(protocol).roles}


def add_protocol_options(parser: Any, protocol: type[Protocol]) -> None:
    """Add ``protocol``'s ``--agent-*`` options (call from a conftest's ``pytest_addoption``;
    the plugin has added its own and the built-in protocols' by then)."""
    add_options(parser, protocol.options)
