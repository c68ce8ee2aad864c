"""A parsed case file's cases as the parse cache stores them, read back without decoding.

An xdist worker of a split run makes the items of its share of the cases only, yet a
protocol expands the file's cases together (AgentClinic's candidate diagnoses are the file's,
CRAFT-MD's options its specialty's). Decoding every case in every worker cost each ~20 us
of CPU a case and, at 10,000 cases, left ~30 MB of freed models in its heap: the items it
keeps were allocated among them, so the allocator could hand none of it back (8 workers:
~250 MB). Here the stored texts stay in one buffer; the worker's own cases are decoded once
and kept, another worker's case is decoded when the protocol reads it and let go at once, so
the same few blocks of memory serve them all.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterator, Sequence
from typing import overload

from pydantic import BaseModel

from ..core.case import Case
from ..core.heap import FrozenParts, gc_paused


class StoredCases(Sequence[Case]):
    """A file's cases in order, each decoded from its stored JSON text when read; only
    those :meth:`choose` picked are kept (decoded once, their equal parts shared).

    ``markers``: each specialty marker of the file's cases and the specialty it was first met
    with. ``names``: each case's dataset and id, or None when the read-back left them
    undecoded (:meth:`choose` then goes by position alone): a worker finds its share without
    decoding a case.
    """

    def __init__(self, data: bytes, starts: array[int], lines: array[int],
                 markers: dict[str, str], names: list[tuple[str, str]] | None) -> None:
        if len(starts) != len(lines) + 1 or (names is not None and len(names) != len(lines)):
            raise ValueError("the stored cases do not match their header")
        self._data = data  # the cases' texts, one a line
        self._starts = starts  # where each case's text starts, and where the last ends
        self.lines = lines
        self._names = names
        #: Each specialty marker of the file's cases and the specialty it was first met with.
        self.markers = markers
        self._kept: dict[int, Case] = {}
        self._shared = FrozenParts()

    def __len__(self) -> int:
        return len(self.lines)

    @overload
    def __getitem__(self, index: int) -> Case: ...

    @overload
    def __getitem__(self, index: slice) -> list[Case]: ...

    def __getitem__(self, index: int | slice) -> Case | list[Case]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(index)
        kept = self._kept.get(index)
        return kept if kept is not None else Case.model_validate_json(self._raw(index))

    def __iter__(self) -> Iterator[Case]:
        for index in range(len(self)):
            yield self[index]

    def _raw(self, index: int) -> bytes:
        return self._data[self._starts[index]:self._starts[index + 1] - 1]  # less its newline

    def text(self, index: int) -> str:
        """The case's stored JSON text."""
        return self._raw(index).decode()

    def choose(self, takes: Callable[[str, str], bool] | None = None, *,
               dealt: Callable[[], bool] | None = None, share: bool = True) -> list[int]:
        """Decode and keep the cases ``takes(dataset, case_id)`` says yes to, or, for a choice
        by position alone, ``dealt()`` (either is asked once a case, in order; ``takes``
        needs the names read back); returns their indices. ``share``: the kept cases share
        all their equal parts, else only their sets of given fields (:class:`GivenFields`:
        for a caller that keeps their texts, not the models)."""
        if (takes is None) == (dealt is None):
            raise TypeError("choose by the names (takes) or by position (dealt)")
        if dealt is not None:
            chosen = [i for i in range(len(self)) if dealt()]
        else:
            assert takes is not None
            if self._names is None:
                raise TypeError("the cases' names were not read back: choose by position")
            chosen = [i for i, (dataset, case_id) in enumerate(self._names)
                      if takes(dataset, case_id)]
        self._names = None
        shared = self._shared if share else GivenFields()
        with gc_paused():  # models that live on (see loaders.load_case_file)
            for index in chosen:
                case = Case.model_validate_json(self._raw(index))
                shared.share(case)
                self._kept[index] = case
        return chosen


class GivenFields(FrozenParts):
    """Shares one part of the cases, the cheapest to share for most of the memory: the sets
    of given field names of each case, its patient and their symptoms (~0.9 KB a case; a
    pydantic model keeps a set of its own). For models held only while a collection makes
    its items (each item keeps its case's text): all the parts cost ~9 us a case (35 ms at
    4,000), these ~1 us, and without them the models' peak, not the items', set the
    process's memory (1.1 -> 2.2 KB an item beyond plain pytest's)."""

    def __init__(self) -> None:
        super().__init__()
        self._last: dict[type[BaseModel], set[str]] = {}

    def share(self, model: BaseModel, depth: int = 0) -> None:
        """Let ``model`` (a case) use the sets of given fields equal ones use."""
        del depth
        if isinstance(model, Case):
            patient = model.patient
            for part in (model, patient, patient.symptoms):
                self._given(part)

    def _given(self, model: BaseModel) -> None:
        given, kind = model.__pydantic_fields_set__, type(model)
        last = self._last.get(kind)
        if last is None or given != last:  # a file's cases mostly give the same fields
            last = self._last[kind] = self._sets.setdefault((kind, frozenset(given)), given)
        object.__setattr__(model, "__pydantic_fields_set__", last)


class MarkerOf:
    """A case's specialty marker (:attr:`Case.specialty_marker`), worked out once for each
    specialty: a file's thousands of cases name a few (a marker is a regular expression's
    pass over the name, asked of each case two or three times by a collection)."""

    def __init__(self) -> None:
        self._markers: dict[str, str] = {}

    def __call__(self, case: Case) -> str:
        marker = self._markers.get(case.specialty)
        if marker is None:
            marker = self._markers[case.specialty] = case.specialty_marker
        return marker


def split_lines(data: bytes) -> array[int]:
    """Where each line of ``data`` (every line ends with a newline) starts, and its end.

    Each line must look like a JSON object (a damaged entry is parsed anew; a case is only
    decoded when read, so this is the check a read-back can afford: ~1 us a case)."""
    starts = array("q", [0])
    find, at = data.find, 0
    while (at := find(b"\n", at) + 1) > 0:
        if data[starts[-1]] != 0x7B or data[at - 2] != 0x7D:  # "{" ... "}"
            raise ValueError("a stored case is not a JSON object")
        starts.append(at)
    if starts[-1] != len(data):
        raise ValueError("the stored cases do not end with a newline")
    return starts
