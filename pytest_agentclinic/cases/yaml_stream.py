"""YAML case files built a case at a time.

``yaml.load`` composes the node graph of the whole document before it builds any of it:
~13 KB a case, 105 MB for a file of 8,000 cases, where the data built is ~3 KB a case. Here the
long lists (a top-level list, or a list under a top-level key such as ``cases:``) are composed
and built one element at a time, and everything else as ``yaml.load`` does; libyaml still
parses (composing in Python, the 8,000-case file loads in half the time: the whole graph kept
the garbage collector busy). The data is the same, except that an alias of (a part of) a list
element is built as an equal copy rather than as the same object. An element of plain data
(most cases) is built from the parser's events without composing it (:mod:`.yaml_events`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import yaml
from yaml.composer import Composer, ComposerError
from yaml.constructor import ConstructorError, SafeConstructor
from yaml.events import (
    AliasEvent,
    CollectionStartEvent,
    Event,
    MappingEndEvent,
    MappingStartEvent,
    SequenceEndEvent,
    SequenceStartEvent,
    StreamEndEvent,
)
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode
from yaml.resolver import Resolver

from ..core.errors import InputError
from . import yaml_events

_STR = "tag:yaml.org,2002:str"
_MERGE = "tag:yaml.org,2002:merge"
#: libyaml's safe loader when PyYAML has it (the pure-Python one takes ~15 ms per case, two
#: minutes for an 8,000-case file), for what needs the whole document's nodes at once.
WHOLE_LOADER: type[Any] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

class DuplicateKey(ConstructorError, InputError):
    """A mapping gives one key twice."""

    def __init__(self, node: MappingNode, key: ScalarNode, first: int) -> None:
        super().__init__("while constructing a mapping", node.start_mark,
                         f"duplicate key {key.value!r} (first given at line {first}): the "
                         f"later value would silently replace the first", key.start_mark)
        self.key = str(key.value)


@dataclass(frozen=True)
class ElementError:
    """A list element that could not be built: where, which field and why."""

    line: int
    field: str
    message: str


class _NoDuplicates(SafeConstructor):
    """The safe constructor, refusing a key given twice in one mapping (merge keys and the
    keys they bring in may still be overridden, as YAML intends)."""

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        if isinstance(node, MappingNode):
            seen: dict[tuple[str, str], int] = {}
            for key, _ in node.value:
                if isinstance(key, ScalarNode) and key.tag != _MERGE:
                    ident = (key.tag, key.value)
                    if ident in seen:
                        raise DuplicateKey(node, key, seen[ident])
                    seen[ident] = key.start_mark.line + 1
        return super().construct_mapping(node, deep=deep)


try:
    from yaml._yaml import CParser
except ImportError:  # PyYAML without libyaml: its pure-Python parser composes alike
    from yaml.parser import Parser
    from yaml.reader import Reader
    from yaml.scanner import Scanner

    class _PyLoader(Reader, Scanner, Parser, Composer, _NoDuplicates, Resolver):
        """PyYAML's safe loader with duplicate keys refused."""

        def __init__(self, stream: str) -> None:
            Reader.__init__(self, stream)
            Scanner.__init__(self)
            Parser.__init__(self)
            Composer.__init__(self)
            _NoDuplicates.__init__(self)
            Resolver.__init__(self)

    _Loader: type[Any] = _PyLoader
else:
    class _CLoader(CParser, Composer, _NoDuplicates, Resolver):
        """libyaml's parser with PyYAML's own composer, which composes a node at a time."""

        def __init__(self, stream: str) -> None:
            CParser.__init__(self, stream)
            Composer.__init__(self)
            _NoDuplicates.__init__(self)
            Resolver.__init__(self)

    _Loader = _CLoader


class _AliasCounter:
    """Counts, while composing, what an alias bomb or a recursive alias needs: the nodes
    composed, each anchored node's size, the nodes the aliases add, and whether an alias
    stands inside an anchored node (only then can aliases compound, or loop)."""

    nodes = 0
    aliased = 0
    open_anchors = 0
    nested_alias = False

    def compose_node(self, parent: Any, index: Any) -> Any:
        event = self.peek_event()  # type: ignore[attr-defined]
        anchor = event.anchor
        if isinstance(event, AliasEvent):
            self.nested_alias = self.nested_alias or self.open_anchors > 0
            self.aliased += self.anchor_sizes.get(anchor, 1)  # type: ignore[attr-defined]
            return super().compose_node(parent, index)  # type: ignore[misc]
        self.nodes += 1
        if anchor is None:
            return super().compose_node(parent, index)  # type: ignore[misc]
        before = self.nodes
        self.open_anchors += 1
        try:
            return super().compose_node(parent, index)  # type: ignore[misc]
        finally:
            self.open_anchors -= 1
            self.anchor_sizes[anchor] = self.nodes - before + 1  # type: ignore[attr-defined]


class _CountingLoader(_AliasCounter, _Loader):  # type: ignore[misc]
    """The stream loader, counting aliases (for documents that have any)."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self.anchor_sizes: dict[str, int] = {}


@dataclass(frozen=True)
class AliasCount:
    """What composing a document found of its aliases (see :class:`_AliasCounter`)."""

    nodes: int
    aliased: int
    nested: bool


def load_counting_aliases(text: str) -> tuple[Any, dict[str | None, list[int]], AliasCount]:
    """:func:`load_with_lines`, and the count of the document's aliases, taken on the one
    compose the load makes (no second compose of the document to check them)."""
    loader = _CountingLoader(text)
    data, lines = _load(loader)
    return data, lines, AliasCount(loader.nodes, loader.aliased, loader.nested_alias)


def load(text: str) -> Any:
    """The single document of ``text`` as ``yaml.load`` with the safe loader builds it (and
    its errors), its long lists built an element at a time."""
    return load_with_lines(text)[0]


def load_with_lines(text: str) -> tuple[Any, dict[str | None, list[int]]]:
    """:func:`load`, and the 1-based start line of each element of the long lists: under the
    key that holds the list, or ``None`` for a top-level list."""
    return _load(_Loader(text))


def _load(loader: Any) -> tuple[Any, dict[str | None, list[int]]]:
    loader.element_lines = {}
    try:
        loader.get_event()  # stream start
        if loader.check_event(StreamEndEvent):
            return None, {}
        start = loader.get_event()  # document start
        data = _root(loader)
        loader.get_event()  # document end
        if not loader.check_event(StreamEndEvent):
            raise ComposerError("expected a single document in the stream", start.start_mark,
                                "but found another document", loader.get_event().start_mark)
        return data, loader.element_lines
    finally:
        loader.dispose()


def _plain(event: Event, kind: type[CollectionStartEvent]) -> bool:
    """An untagged collection without an anchor: built as usual, and nothing aliases it."""
    return (isinstance(event, kind) and event.anchor is None
            and getattr(event, "tag", None) in (None, "!"))


def _root(loader: Any) -> Any:
    event = loader.peek_event()
    if _plain(event, SequenceStartEvent):
        return _elements(loader, None)
    if _plain(event, MappingStartEvent):
        return _mapping(loader)
    return loader.construct_document(loader.compose_node(None, None))


def _elements(loader: Any, key: str | None) -> list[Any]:
    """A plain sequence, composed and built an element at a time (their lines kept under
    ``key``); an element that cannot be built stands as an :class:`ElementError`."""
    loader.get_event()
    items: list[Any] = []
    lines: list[int] = loader.element_lines.setdefault(key, [])
    # Plain data is built from the events; a document whose aliases are counted is composed.
    resolve = None if isinstance(loader, _AliasCounter) else yaml_events.resolving(loader)
    while not loader.check_event(SequenceEndEvent):
        mark = loader.peek_event().start_mark
        lines.append(mark.line + 1)
        composer = loader
        if resolve is not None:
            try:
                items.append(yaml_events.build(loader, resolve))
                continue
            except yaml_events.GiveUp as given_up:
                composer = yaml_events.Replay(loader, given_up.events)
        try:
            node = composer.compose_node(None, len(items))
        except RecursionError:
            # The parser is left mid-element: the document cannot be read on.
            raise ComposerError(None, None, "nested too deeply to read", mark) from None
        items.append(_built(loader, node, mark.line + 1))
    loader.get_event()
    return items


def _built(loader: Any, node: Node, line: int) -> Any:
    """The element built from ``node``, or an :class:`ElementError` saying why it cannot be."""
    try:
        return loader.construct_document(node)
    except DuplicateKey as exc:
        error = ElementError(exc.problem_mark.line + 1 if exc.problem_mark else line, exc.key,
                             str(exc.problem))
    except (ConstructorError, ValueError, RecursionError) as exc:
        reason = str(getattr(exc, "problem", None) or exc).splitlines()[0][:200]
        error = ElementError(line, "<record>", f"cannot build: {reason}")
    # The constructor's state of the failed element must not leak into the next one.
    loader.constructed_objects, loader.recursive_objects = {}, {}
    loader.state_generators, loader.deep_construct = [], False
    return error


def _mapping(loader: Any) -> Any:
    """The top-level mapping: its plain lists under string keys are built an element at a
    time (and stand in the mapping's node as empty ones built already); the rest as usual,
    so merge keys and key types behave as in ``yaml.load`` (a repeated key is refused)."""
    start = loader.get_event()
    node = MappingNode(loader.resolve(MappingNode, None, start.implicit), [],
                       start.start_mark, None, flow_style=start.flow_style)
    built: dict[Node, list[Any]] = {}
    while not loader.check_event(MappingEndEvent):
        key = loader.compose_node(node, None)
        if (isinstance(key, ScalarNode) and key.tag == _STR
                and _plain(loader.peek_event(), SequenceStartEvent)):
            first = loader.peek_event()
            items = _elements(loader, str(key.value))
            value: Node = SequenceNode(loader.resolve(SequenceNode, None, first.implicit), [],
                                       first.start_mark, first.end_mark)
            built[value] = items
        else:
            value = loader.compose_node(node, key)
        node.value.append((key, value))
    node.end_mark = loader.get_event().end_mark
    # The constructor builds each node once and remembers it: the lists are built already.
    loader.constructed_objects.update(built)
    return loader.construct_document(node)
