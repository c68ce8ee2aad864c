"""An encounter item: one case in one variant, played in setup, its verdict asserted in the
call; and what it keeps of its spec until it plays (:class:`Rests`)."""

from __future__ import annotations

import dataclasses
import operator
from collections.abc import Hashable
from pathlib import Path
from typing import Any

import pytest
from _pytest._code.code import ExceptionInfo, TerminalRepr

from ..core.case import Case
from ..core.errors import AgentClinicError
from ..core.text import terminal_safe
from ..core.transcript import Transcript
from ..protocols.base import ItemSpec
from .miss import miss_message
from .outcome import Outcome
from .state import session_of

#: The user property that carries an item's result record (JSON) to the reports.
RECORD_PROPERTY = "agentclinic_result"
#: Marks an item the run never played (it stopped starting encounters, e.g. on cost).
UNPLAYED_PROPERTY = "agentclinic_unplayed"


class _Message(TerminalRepr):
    """Plain lines in place of a traceback."""

    def __init__(self, text: str) -> None:
        self.text = text

    def toterminal(self, tw: Any) -> None:
        for line in self.text.splitlines():
            tw.line(line)


class EncounterError(AgentClinicError):
    """The encounter ended in an infrastructure failure: the item's outcome is *error*."""


class EncounterFailed(AgentClinicError, AssertionError):
    """The moderator judged the diagnosis wrong, or none was given."""


#: :class:`ItemSpec`'s fields but its case, in order: what a light item keeps of its spec.
_SPEC_REST = tuple(f.name for f in dataclasses.fields(ItemSpec) if f.name != "case")
#: Those fields of a spec, as a tuple.
_REST_OF = operator.attrgetter(*_SPEC_REST)


class Rests:
    """One tuple of a spec's fields but its case (:data:`_SPEC_REST`) for the items whose
    fields are equal: the items of a label share their models, their variant and the file's
    candidates, but each spec has its own dict of models and its own variant (~0.4 KB an
    item with the tuple)."""

    #: Where the models (a dict) and the candidates are among the fields.
    _MODELS, _CANDIDATES = _SPEC_REST.index("models"), _SPEC_REST.index("candidates")

    def __init__(self) -> None:
        self._made: dict[Hashable, tuple[Any, ...]] = {}

    def of(self, spec: ItemSpec) -> tuple[Any, ...]:
        """``spec``'s fields but its case, as an equal spec's when one was seen."""
        rest: tuple[Any, ...] = _REST_OF(spec)
        key = list(rest)
        key[self._MODELS] = tuple(rest[self._MODELS].items())
        # The candidates by identity: a file's items share one tuple, of every diagnosis of
        # the file, too long to hash for each item (the tuple kept keeps its id unique).
        key[self._CANDIDATES] = id(rest[self._CANDIDATES])
        try:
            return self._made.setdefault(tuple(key), rest)
        except TypeError:  # a protocol's variant that cannot be hashed: not shared
            return rest


class EncounterItem(pytest.Item):
    """One encounter; passes when the moderator judges the diagnosis correct.

    Given its case's stored JSON text (``case_text``), the item holds that text and the
    spec's other fields, and builds its spec (the case validated from the text) when it is
    first asked for, as it plays: a worker holds every item of the run, most of which it
    never plays. The case's dataset, id and specialty stay at hand
    (:attr:`case_key`, :attr:`specialty`) for the hooks that choose items.
    """

    def __init__(self, *, line: int, case_key: tuple[str, str], specialty: str,
                 spec: ItemSpec | None = None, light: tuple[str, tuple[Any, ...]] | None = None,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if (spec is None) == (light is None):
            raise TypeError("an encounter item is made of a spec or of a light one")
        self.line = line
        #: The case's dataset and id (what shards and subsets choose by).
        self.case_key = case_key
        self.specialty = specialty
        self._spec = spec
        #: The case's stored JSON text and the spec's other fields (:data:`_SPEC_REST`).
        self._light = light
        #: What playing the item came to, as the executor returned it (setup to teardown).
        self.outcome: Outcome | None = None

    @property
    def spec(self) -> ItemSpec:
        """The case and the conditions the item plays (until it is reported: :meth:`release`)."""
        if self._spec is None:
            if self._light is None:
                raise AttributeError(f"{self.nodeid}: the item's spec is released once it is "
                                     f"reported (its record is in results.jsonl)")
            text, rest = self._light
            self._spec = ItemSpec(Case.model_validate_json(text), **dict(zip(_SPEC_REST, rest,
                                                                             strict=True)))
        return self._spec

    @property
    def transcript(self) -> Transcript | None:
        """The encounter's transcript, from setup to teardown (JUnit's time reads it)."""
        return self.outcome.transcript if self.outcome is not None else None

    @property
    def transcript_path(self) -> str | None:
        """Where the transcript was written, from setup to teardown."""
        return self.outcome.transcript_path if self.outcome is not None else None

    def release(self) -> None:
        """Let go of what only playing and reporting the item needed, once its last report is
        logged: its case (~4 KB, with the conditions), its result record's property (~2 KB
        of JSON; results.jsonl holds the record) and its outcome. 8,000 items held them to
        the end."""
        self._spec = None
        self._light = None
        self.user_properties[:] = without_record(self.user_properties)
        self.outcome = None

    def setup(self) -> None:
        """Play the encounter (run concurrently by the session's executor) and keep the
        outcome it returns.

        An infrastructure failure raises here so pytest reports an *error*, not a failure;
        an item the run did not play (the cost limit) is skipped.
        """
        spec = self.spec
        self.outcome = outcome = session_of(self.config).executor.play(self, spec)
        if outcome.unplayed is not None:
            self.user_properties.append((UNPLAYED_PROPERTY, outcome.unplayed))
            pytest.skip(outcome.unplayed)
        if outcome.record_json is not None:
            self.user_properties.append((RECORD_PROPERTY, outcome.record_json))
        if outcome.failure is not None:
            raise EncounterError(outcome.failure)
        if outcome.error is not None:
            raise EncounterError(f"{terminal_safe(outcome.error)}\n"
                                 f"transcript: {_one_line(str(outcome.transcript_path))}")

    def teardown(self) -> None:
        """Release the transcript: it is saved, and 8,000 of them would not fit in memory."""
        self.outcome = None

    def runtest(self) -> None:
        """Assert the verdict."""
        t = self.transcript
        assert t is not None
        if t.outcome == "correct":
            return
        session = session_of(self.config)
        if t.outcome == "limit":
            message = (f"{terminal_safe(str(t.error))}\n"
                       f"  transcript: {_one_line(str(self.transcript_path))}")
            if session.settings.gate.active:
                pytest.xfail(message)
            raise EncounterFailed(message)
        protocol = session.protocol
        # The protocol's words: a triage protocol's miss is not a misdiagnosis.
        message = miss_message(t, protocol.expected(self.spec.case), self.transcript_path,
                               start_dir=self.config.invocation_params.dir,
                               verbose=self.config.get_verbosity() > 0, words=protocol.wording)
        if session.settings.gate.active:
            # Under a gate a wrong answer is a measurement, not a failure: the gate's own
            # testcases carry the verdict, so JUnit's failure count matches the exit status.
            pytest.xfail(message)
        raise EncounterFailed(message)

    def repr_failure(self, excinfo: ExceptionInfo[BaseException],
                     style: Any = None) -> str | TerminalRepr:
        # A gated miss (xfail) too: pytest formats its traceback, which no one sees, at
        # ~0.15 s apiece (it parses every frame's source): most of a gated run's time.
        if isinstance(excinfo.value, (EncounterFailed, EncounterError, pytest.xfail.Exception)):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style=style)

    def _repr_failure_py(self, excinfo: ExceptionInfo[BaseException],
                         style: Any = None) -> TerminalRepr:
        # pytest formats setup errors here rather than in repr_failure; an encounter's
        # infrastructure error is a message, not a traceback into the harness.
        if isinstance(excinfo.value, EncounterError):
            return _Message(str(excinfo.value))
        return super()._repr_failure_py(excinfo, style=style)

    def reportinfo(self) -> tuple[Path, int, str]:
        # The full item id: the variants of one case (bias, experiment, budget, sample) must
        # be told apart in failure headers.
        return self.path, self.line - 1, self.nodeid


def _one_line(text: str) -> str:
    """A value from the case or the agents, printed within one line of a message: its
    control characters and newlines escaped (an ESC, a CR or a forged "expected:" line
    reaches no terminal). The record keeps the text as it was."""
    return terminal_safe(text, newlines=False)


def without_record(properties: list[tuple[str, object]]) -> list[tuple[str, object]]:
    """``properties`` without the record's (a new list: a report may share its item's)."""
    return [(name, value) for name, value in properties if name != RECORD_PROPERTY]
