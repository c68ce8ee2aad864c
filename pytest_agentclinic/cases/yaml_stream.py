"""YAML case files built a case at a time.

``yaml.load`` composes the node graph of the whole document before it builds any of it:
~13 KB a case, 105 MB for a file of 8,000 cases, where the data built is ~3 KB a case. Here the
long lists (a top-level list, or a list under a top-level key such as ``cases:``) are composed
and built one element at a time, and everything else as ``yaml.load`` does; libyaml still
parses (composing in Python, the 8,000-case file loads in half the time: the whole graph kept
the garbage collector busy). The data is the same, except that an alias of (a part of) a list
element is built as an equal copy rather than as the same object.
"""

from __future__ import annotations

from typing import Any

import yaml
from yaml.composer import Composer, ComposerError
from yaml.constructor import SafeConstructor
from yaml.events import (
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

_STR = "tag:yaml.org,2002:str"
#: libyaml's safe loader when PyYAML has it (the pure-Python one takes ~15 ms per case, two
#: minutes for an 8,000-case file), for what needs the whole document's nodes at once.
WHOLE_LOADER: type[Any] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

try:
    from yaml._yaml import CParser
except ImportError:  # PyYAML without libyaml: its pure-Python loader composes alike
    _Loader: type[Any] = yaml.SafeLoader
else:
    class _CLoader(CParser, Composer, SafeConstructor, Resolver):
        """libyaml's parser with PyYAML's own composer, which composes a node at a time."""

        def __init__(self, stream: str) -> None:
            CParser.__init__(self, stream)
            Composer.__init__(self)
            SafeConstructor.__init__(self)
            Resolver.__init__(self)

    _Loader = _CLoader


def load(text: str) -> Any:
    """The single document of ``text`` as ``yaml.load`` with the safe loader builds it (and
    its errors), its long lists built an element at a time."""
    loader = _Loader(text)
    try:
        loader.get_event()  # stream start
        if loader.check_event(StreamEndEvent):
            return None
        start = loader.get_event()  # document start
        data = _root(loader)
        loader.get_event()  # document end
        if not loader.check_event(StreamEndEvent):
            raise ComposerError("expected a single document in the stream", start.start_mark,
                                "but found another document", loader.get_event().start_mark)
        return data
    finally:
        loader.dispose()


def _plain(event: Event, kind: type[CollectionStartEvent]) -> bool:
    """An untagged collection without an anchor: built as usual, and nothing aliases it."""
    return (isinstance(event, kind) and event.anchor is None
            and getattr(event, "tag", None) in (None, "!"))


def _root(loader: Any) -> Any:
    event = loader.peek_event()
    if _plain(event, SequenceStartEvent):
        return _elements(loader)
    if _plain(event, MappingStartEvent):
        return _mapping(loader)
    return loader.construct_document(loader.compose_node(None, None))


def _elements(loader: Any) -> list[Any]:
    """A plain sequence, composed and built an element at a time."""
    loader.get_event()
    items: list[Any] = []
    while not loader.check_event(SequenceEndEvent):
        items.append(loader.construct_document(loader.compose_node(None, len(items))))
    loader.get_event()
    return items


def _mapping(loader: Any) -> Any:
    """The top-level mapping: its plain lists under string keys are built an element at a
    time (and stand in the mapping's node as empty ones built already); the rest as usual,
    so merge keys, key types and repeated keys behave as in ``yaml.load``."""
    start = loader.get_event()
    node = MappingNode(loader.resolve(MappingNode, None, start.implicit), [],
                       start.start_mark, None, flow_style=start.flow_style)
    built: dict[Node, list[Any]] = {}
    while not loader.check_event(MappingEndEvent):
        key = loader.compose_node(node, None)
        if (isinstance(key, ScalarNode) and key.tag == _STR
                and _plain(loader.peek_event(), SequenceStartEvent)):
            first = loader.peek_event()
            items = _elements(loader)
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
