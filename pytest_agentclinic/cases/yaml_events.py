"""A list element of a YAML case file built straight from the parser's events.

Composing an element's node graph and then constructing it (PyYAML's composer and
constructor, in Python) cost ~65 us a case: most of a cold collection's CPU. Most elements
are plain data (untagged mappings, lists and scalars, no anchor, alias or merge key): here
those are built from libyaml's events in one loop, with the safe loader's own implicit
resolvers and scalar constructors, so the data is the same. Anything else (an anchor, an
alias, a tag, a merge key, a key given twice, a key that is a collection, a scalar whose
constructor fails, nesting deeper than :data:`MAX_DEPTH`) makes :func:`build` give up: the
element's events read so far are handed back, and the caller composes the element from
them and from the rest of the stream (:class:`Replay`), with the same errors at the same
places as before.
"""

from __future__ import annotations

from collections import deque
from typing import Any

from yaml.composer import Composer
from yaml.events import (
    Event,
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
)
from yaml.nodes import ScalarNode
from yaml.resolver import Resolver

_STR = "tag:yaml.org,2002:str"
#: The scalar types a plain scalar may resolve to that are built here (the safe
#: constructor's own functions); any other (merge ``<<``, value ``=``) gives up.
_BUILT = frozenset({"tag:yaml.org,2002:null", "tag:yaml.org,2002:bool",
                    "tag:yaml.org,2002:int", "tag:yaml.org,2002:float",
                    "tag:yaml.org,2002:timestamp"})
#: Deeper elements are composed (where a hostile depth meets the composer's own limit).
MAX_DEPTH = 64
#: A mapping's next event is its key's.
_NO_KEY: Any = object()


class GiveUp(Exception):
    """The element is not plain data: ``events`` (read so far) must be composed."""

    def __init__(self, events: list[Event]) -> None:
        super().__init__("not plain data")
        self.events = events


class Resolving:
    """The tag a plain scalar resolves to under a loader's implicit resolvers: what
    :meth:`Resolver.resolve` finds (the loader must have no path resolvers)."""

    def __init__(self, loader: Any) -> None:
        table: dict[str | None, list[tuple[str, Any]]] = loader.yaml_implicit_resolvers
        wildcard = table.get(None, [])
        self._by_first = {first: [*found, *wildcard] for first, found in table.items()
                          if first is not None}
        self._wildcard = wildcard
        #: The first characters ("" for an empty scalar) that may resolve to another tag
        #: than text; None when any may.
        self.firsts: frozenset[str] | None = None if wildcard else frozenset(self._by_first)

    def __call__(self, value: str) -> str:
        for tag, regexp in self._by_first.get(value[:1], self._wildcard):
            if regexp.match(value):
                return str(tag)
        return _STR


def resolving(loader: Any) -> Resolving | None:
    """``loader``'s :class:`Resolving`; None when it has path resolvers (then every element
    is composed)."""
    return None if loader.yaml_path_resolvers else Resolving(loader)


def build(loader: Any, resolve: Resolving) -> Any:
    """The next node of ``loader``'s event stream built as the safe constructor builds it;
    raises :class:`GiveUp` (with the events read) when it is not plain data."""
    get_event = loader.get_event
    events: list[Event] = []
    append = events.append
    firsts = resolve.firsts
    # The open collections; for each open mapping, its pending key and how many it was given.
    stack: list[Any] = []
    keys: list[Any] = []
    given: list[int] = []
    while True:
        event = get_event()
        append(event)
        kind = type(event)
        if kind is ScalarEvent:
            if event.anchor is not None or event.tag is not None:
                raise GiveUp(events)
            value = event.value
            if event.implicit[0] and (firsts is None or value[:1] in firsts):
                tag = resolve(value)
                if tag != _STR:
                    value = _scalar(loader, tag, event, events)
        elif kind is MappingStartEvent or kind is SequenceStartEvent:
            if event.anchor is not None or event.tag is not None or len(stack) >= MAX_DEPTH:
                raise GiveUp(events)
            if kind is MappingStartEvent:
                stack.append({})
                keys.append(_NO_KEY)
                given.append(0)
            else:
                stack.append([])
            continue
        elif kind is MappingEndEvent:
            value = stack.pop()
            keys.pop()
            if len(value) != given.pop():
                # Two keys built equal: given twice (the loader's error), or equal values
                # of other texts (1 and 1.0), which the composed mapping shows.
                raise GiveUp(events)
        elif kind is SequenceEndEvent:
            value = stack.pop()
        else:  # an alias
            raise GiveUp(events)
        if not stack:
            return value
        top = stack[-1]
        if type(top) is list:
            top.append(value)
        elif keys[-1] is not _NO_KEY:
            top[keys[-1]] = value
            keys[-1] = _NO_KEY
        elif kind is not ScalarEvent or value != value:
            # A collection as a key (the constructor's error), or a key not equal to
            # itself, which a count cannot find given twice.
            raise GiveUp(events)
        else:
            keys[-1] = value
            given[-1] += 1


def _scalar(loader: Any, tag: str, event: Any, events: list[Event]) -> Any:
    """A plain scalar of another type than text, built by the safe constructor's function."""
    if tag not in _BUILT:
        raise GiveUp(events)
    try:
        return loader.yaml_constructors[tag](
            loader, ScalarNode(tag, event.value, event.start_mark, event.end_mark, event.style))
    except Exception:  # the composed element raises it where it did
        raise GiveUp(events) from None


class Replay(Composer, Resolver):
    """Composes from ``events`` (given back by :class:`GiveUp`) and then from ``loader``'s
    stream, sharing the loader's anchors: the element as the loader would compose it."""

    def __init__(self, loader: Any, events: list[Event]) -> None:
        Composer.__init__(self)
        Resolver.__init__(self)
        self.anchors = loader.anchors
        self._events = deque(events)
        self._loader = loader

    def peek_event(self) -> Any:
        """The next event, left in place."""
        return self._events[0] if self._events else self._loader.peek_event()

    def get_event(self) -> Any:
        """The next event."""
        return self._events.popleft() if self._events else self._loader.get_event()

    def check_event(self, *choices: type[Event]) -> bool:
        """Whether there is a next event (of one of ``choices``, when given)."""
        if not self._events:
            return bool(self._loader.check_event(*choices))
        return not choices or isinstance(self._events[0], choices)
