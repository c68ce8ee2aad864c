"""Case formats by file suffix: the built-in ones (``cases.loaders`` registers its readers
here) and those of installed distributions (the ``pytest_agentclinic.case_formats``
entry-point group, named by suffix) or a conftest (:func:`register`).

An extension's reader turns a file's text into records, each with the 1-based line it
starts on: a mapping in the project's case shape (``id``, ``objective``, ``patient``,
``diagnosis``, ``metadata``, ...), or a :class:`~.errors.CaseError` for a record it cannot
read. The loader validates every mapping into a ``Case``, so a bad one is an error naming
file, line and field, and the file's other cases load.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from importlib.metadata import EntryPoint
from pathlib import Path
from typing import Any, cast

from ..core import extensions

#: ``(path, text) -> (line, record or CaseError) ...``: an extension's case format.
RecordReader = Callable[[Path, str], Iterable[tuple[int, Any]]]

_BUILT_IN: set[str] = set()
_READERS: dict[str, RecordReader] = {}


def suffix_of(name: str) -> str:
    """``.triage`` for ``triage`` or ``.triage`` (entry-point names may omit the dot)."""
    return name if name.startswith(".") else f".{name}"


def declare_built_in(*suffixes: str) -> None:
    """The suffixes the project's own readers handle (no extension may take them)."""
    _BUILT_IN.update(suffixes)


def register(suffix: str, reader: RecordReader) -> RecordReader:
    """Read files ending in ``suffix`` with ``reader`` (a conftest or plugin calls this)."""
    suffix = suffix_of(suffix)
    if suffix in _BUILT_IN:
        raise ValueError(f"case format {suffix!r} is built in")
    if not callable(reader):
        raise TypeError(f"{reader!r} is not callable")
    _READERS[suffix] = reader
    return reader


def _add_installed(point: EntryPoint, reader: object) -> None:
    if not callable(reader) or suffix_of(point.name) in _BUILT_IN:
        raise extensions.ExtensionError(f"{extensions.describe(point)}: needs a callable "
                                        f"reader for a suffix that is not built in")
    # A conftest's registration of the same suffix, made earlier, wins.
    _READERS.setdefault(suffix_of(point.name), cast(RecordReader, reader))


def _load_installed() -> None:
    extensions.load_once(extensions.CASE_FORMATS, _add_installed)


def reader_for(suffix: str) -> RecordReader | None:
    """The extension reader of ``suffix``, if one is registered or installed."""
    _load_installed()
    return _READERS.get(suffix)


def suffixes() -> tuple[str, ...]:
    """Every suffix a case file may have: the built-in ones, then the extensions'."""
    _load_installed()
    return (*sorted(_BUILT_IN), *_READERS)


@dataclass(frozen=True)
class JsonlShape:
    """A JSON-lines record shape an extension reads. ``.jsonl`` is built in, so an
    extension's JSON-lines files are recognised by content, as the built-in ones are: a
    file none of the built-in shapes reads, whose first record has every one of ``keys``,
    is read by ``reader`` (records in the project's case shape, as for a suffix format)."""

    #: The format's name (the loaded file's ``format``).
    name: str
    #: The keys every record of the shape has (together, they tell it from other shapes).
    keys: tuple[str, ...]
    reader: RecordReader


_SHAPES: dict[str, JsonlShape] = {}


def register_jsonl_shape(shape: JsonlShape) -> JsonlShape:
    """Read JSON-lines files whose records have ``shape.keys`` with ``shape.reader``."""
    if not (isinstance(shape, JsonlShape) and shape.keys and callable(shape.reader)):
        raise TypeError(f"{shape!r} is not a JsonlShape with keys and a callable reader")
    _SHAPES[shape.name] = shape
    return shape


def _add_installed_shape(point: EntryPoint, shape: object) -> None:
    if not (isinstance(shape, JsonlShape) and shape.keys and callable(shape.reader)):
        raise extensions.ExtensionError(f"{extensions.describe(point)}: needs a JsonlShape "
                                        f"with keys and a callable reader")
    _SHAPES.setdefault(shape.name, shape)  # a conftest's, registered earlier, wins


def jsonl_shape_for(record: Mapping[str, Any]) -> JsonlShape | None:
    """The registered or installed shape whose keys ``record`` has all of (the one with
    the most keys when several fit), if any."""
    extensions.load_once(extensions.JSONL_SHAPES, _add_installed_shape)
    fits = [s for s in _SHAPES.values() if all(k in record for k in s.keys)]
    return max(fits, key=lambda s: len(s.keys), default=None)
