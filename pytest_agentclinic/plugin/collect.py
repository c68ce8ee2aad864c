"""Collection: a case file becomes one item per case and variant (the protocol's expansion)."""

from __future__ import annotations

import contextlib
import dataclasses
import operator
import re
import sys
from collections.abc import Hashable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from _pytest._code.code import ExceptionInfo, TerminalRepr

from ..cases.errors import CaseError
from ..cases.loaders import LoadedFile
from ..cases.stored import MarkerOf
from ..core.case import Case
from ..core.errors import AgentClinicError, InputError
from ..core.heap import gc_paused
from ..core.text import terminal_safe
from ..core.transcript import Transcript
from ..protocols.base import ItemSpec
from .case_paths import Origin
from .miss import miss_message
from .outcome import Outcome
from .shares import WorkerShare, share_of
from .state import session_of

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


class CaseLoadError(InputError):
    """A case record that could not be read; shown as a collection error for its line."""


class EncounterError(AgentClinicError):
    """The encounter ended in an infrastructure failure: the item's outcome is *error*."""


class EncounterFailed(AgentClinicError, AssertionError):
    """The moderator judged the diagnosis wrong, or none was given."""


class CaseRecordError(pytest.Collector):
    """Stands for a bad record so its error names file, line and field, and nothing else fails.

    Past the first :data:`ERROR_ITEMS` of a file, one item stands for all the file's other
    bad records, a line each: 10,000 items would cost pytest a second and three lines each.
    """

    def __init__(self, *, errors: list[tuple[CaseError, str]], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.errors = errors

    def collect(self) -> list[pytest.Item | pytest.Collector]:
        raise CaseLoadError("\n".join(f"{what}: {error}" for error, what in self.errors))

    def repr_failure(self, excinfo: ExceptionInfo[BaseException],
                     style: Any = None) -> str | TerminalRepr:
        del style  # collectors format errors one way
        if isinstance(excinfo.value, CaseLoadError):
            lines = [terminal_safe(line, newlines=False)
                     for line in str(excinfo.value).splitlines()]
            head = [] if len(lines) == 1 else [f"{len(lines):,} more bad records of this file:"]
            return "\n".join(head + lines)
        return super().repr_failure(excinfo)


#: A file's bad records shown as an item each; the rest share one item, a line each.
ERROR_ITEMS = 20
#: Node names of :class:`CaseRecordError` (the session counts them apart): ``line-7``,
#: ``line-7.2`` (a second error of line 7), ``line-90-and-9979-more``.
ERROR_NODE = r"::(?:line|sidecar)-[\d.]+(?:-and-\d+-more)?$"
_MORE = re.compile(r"-and-(\d+)-more$")


def bad_records_in(nodeid: str) -> int:
    """How many bad records the error item ``nodeid`` (an :data:`ERROR_NODE`) stands for."""
    more = _MORE.search(nodeid)
    return 1 + int(more.group(1)) if more else 1


class CaseFile(pytest.File):
    """A file of cases in any supported format; the run's protocol makes its items."""

    def __init__(self, *, origin: Origin = "folder", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.origin = origin

    def _errors(self, loaded: LoadedFile) -> Iterator[CaseRecordError]:
        """One error node per problem; its name is unique within the file."""
        errors = [(e, "bad case record") for e in loaded.errors]
        if loaded.not_cases is not None and not loaded.errors:
            errors = [(CaseError(self.path, 1, "<file>", loaded.not_cases), "not a case file")]
        if loaded.sidecar_error is not None:
            errors.append((loaded.sidecar_error, "bad specialty sidecar (its cases run as "
                                                 "'unspecified')"))
        count: dict[str, int] = {}
        for error, what in errors[:ERROR_ITEMS]:
            # The second error of a line is line-7.2, the third line-7.3: short and unique
            # however many share the line (".1" appended per repeat made 10,000 errors of
            # one line quadratic: 17 MB of names).
            name = f"{'sidecar' if error.path != self.path else 'line'}-{error.line}"
            count[name] = count.get(name, 0) + 1
            if count[name] > 1:
                name = f"{name}.{count[name]}"
            yield CaseRecordError.from_parent(self, name=name, errors=[(error, what)])
        rest = errors[ERROR_ITEMS:]
        if rest:
            yield CaseRecordError.from_parent(
                self, name=f"line-{rest[0][0].line}-and-{len(rest) - 1}-more", errors=rest)

    def collect(self) -> Iterator[pytest.Item | pytest.Collector]:
        # The cases read and the items made live to the end of the run, or are freed at
        # once by their count: the cyclic collector's passes while they accumulate were
        # wasted (~90 of them over 4,000 cases), and the models are let go before it runs.
        with gc_paused():
            nodes = list(self._nodes())
        yield from nodes

    def _nodes(self) -> Iterator[pytest.Item | pytest.Collector]:
        """The file's error nodes, then its items."""
        from ..cases import parse_cache

        state = session_of(self.config)
        share = share_of(self.config, state.settings.operations.shard)
        # Each item holds its case's stored text, not the model, when the store gave one:
        # 10,000 models were ~24 MB a process. The items are made once the file's models are
        # let go, in the memory they held. Items that share a chain of calls (CRAFT-MD's
        # experiments of one conversation) are told apart by their case object: they keep it.
        light = state.protocol.items_per_chain(state.settings.options) == 1
        # Parsed once for all the run's processes; a worker of a split run reads it back
        # undecoded and decodes its share's cases only (see cases/stored.py). Models let go
        # once the items are made share nothing (sharing cost more than building them).
        loaded = parse_cache.load(self.path, state.settings.cache_dir, stored=share is not None,
                                  models_kept=not light,
                                  names=share is not None and not share.by_position)
        if loaded.not_cases is not None and self.origin == "folder" and not loaded.damaged:
            return  # a well-formed file of another kind in a folder of cases
        yield from self._errors(loaded)
        everyone, made, markers = _cases(loaded, share, kept=not light)
        # Expanded from all the file's cases all the same (a protocol may draw on the file's
        # other cases, e.g. their diagnoses); a split worker keeps its own cases' items.
        specs = state.protocol.expand(everyone, state.run_options)
        if share is not None:
            mine = {id(case) for _line, case, _text in made}
            specs = (spec for spec in specs if id(spec.case) in mine)
        plans = list(self._plans(made, markers, specs, light))
        del specs, everyone, made
        loaded.cases.clear()
        loaded.stored = None
        yield from self._items(plans)

    def _items(self, plans: list[_Plan]) -> Iterator[EncounterItem]:
        """The planned items, each with its specialty's mark."""
        # One mark per specialty, shared by its items (a new one per item: ~0.2 KB each).
        marks: dict[str, pytest.MarkDecorator] = {}
        # pytest 9.2's structured node ids (what --lf matches on): the case's id, the
        # variant's label as its parameters, as a parametrized test's.
        parent_id = getattr(self, "id", None)
        for (case_id, label), marker, kwargs in plans:
            if parent_id is not None:
                with contextlib.suppress(ValueError):  # an id NodeId refuses: pytest's own
                    kwargs["nodeid"] = parent_id.child(case_id).with_params(label)
            item = EncounterItem.from_parent(self, name=f"{case_id}[{label}]", **kwargs)
            item.add_marker(marks.get(marker)
                            or marks.setdefault(marker, getattr(pytest.mark, marker)))
            yield item

    def _plans(self, made: list[_Made], markers: Mapping[str, str], specs: Iterable[ItemSpec],
               light: bool) -> Iterator[_Plan]:
        """Each item's case id and variant label, marker and what it is made of."""
        # Every case's specialty, the file's cases all (an xdist worker of a split run makes
        # its share's items only, but its -m and --strict-markers read the same markers).
        known = {m.split(":")[0] for m in self.config.getini("markers")}
        for marker, specialty in markers.items():
            # Specialties come from data, so their markers are registered as they are met
            # (keeps ``--strict-markers`` runs working).
            if marker not in known:
                self.config.addinivalue_line("markers", f"{marker}: {specialty} cases")
        lines = {id(case): line for line, case, _text in made}
        texts = {id(case): text for _line, case, text in made if text is not None} if light else {}
        rests = _Rests()
        marker_of = MarkerOf()
        for spec in specs:
            case = spec.case
            marker = marker_of(case)
            text = texts.get(id(case))
            held: dict[str, Any] = (
                {"spec": spec} if text is None else {"light": (text, rests.of(spec))})
            # Equal names held once a process (the models read back share none).
            yield ((case.id, spec.label), marker,
                   {"line": lines[id(case)], "case_key": (sys.intern(case.dataset), case.id),
                    "specialty": sys.intern(case.specialty), **held})


#: An item to make: its case id and variant label, its marker, what it is made of.
_Plan = tuple[tuple[str, str], str, dict[str, Any]]
#: A case this process makes items of: its line, the case, its stored text (or None).
_Made = tuple[int, Case, "str | None"]


def _cases(loaded: LoadedFile, share: WorkerShare | None, *, kept: bool = True
           ) -> tuple[Sequence[Case], list[_Made], dict[str, str]]:
    """The file's cases (what the protocol expands), those this process makes items of, and
    each specialty marker with its specialty. ``kept``: whether the items keep the models
    (else their texts)."""
    stored = loaded.stored
    if stored is not None:  # a split worker's read-back: only its share is decoded
        assert share is not None
        chosen = (stored.choose(dealt=share.deal, share=kept) if share.by_position
                  else stored.choose(share.takes, share=kept))
        return stored, [(stored.lines[i], stored[i], stored.text(i)) for i in chosen], \
            stored.markers
    everyone = [case for _line, case in loaded.cases]
    texts: list[str | None] = (list(loaded.texts) if len(loaded.texts) == len(everyone)
                               else [None] * len(everyone))
    made = [(line, case, text) for (line, case), text in zip(loaded.cases, texts, strict=True)
            if share is None or share.takes(case.dataset, case.id)]
    markers: dict[str, str] = {}
    marker_of = MarkerOf()
    for case in everyone:
        markers.setdefault(marker_of(case), case.specialty)
    return everyone, made, markers


#: :class:`ItemSpec`'s fields but its case, in order: what a light item keeps of its spec.
_SPEC_REST = tuple(f.name for f in dataclasses.fields(ItemSpec) if f.name != "case")
#: Those fields of a spec, as a tuple.
_REST_OF = operator.attrgetter(*_SPEC_REST)


class _Rests:
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
