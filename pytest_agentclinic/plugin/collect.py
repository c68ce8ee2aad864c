"""Collection: a case file becomes one item per case and variant (the protocol's expansion)."""

from __future__ import annotations

import contextlib
import re
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

import pytest
from _pytest._code.code import ExceptionInfo, TerminalRepr

from ..cases.errors import CaseError
from ..cases.loaders import LoadedFile
from ..cases.stored import MarkerOf
from ..core.case import Case
from ..core.errors import InputError
from ..core.heap import gc_paused
from ..core.text import terminal_safe
from ..protocols.base import ItemSpec
from .case_paths import Origin
from .item import EncounterItem, Rests
from .shares import WorkerShare, share_of
from .state import session_of


class CaseLoadError(InputError):
    """A case record that could not be read; shown as a collection error for its line."""


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
        rests = Rests()
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
