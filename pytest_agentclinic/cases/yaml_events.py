"""A list element of a YAML case file built straight from the parser's events.

Composing an element's node graph and then constructing it (PyYAML's composer and
constructor, in Python) cost ~65 us a case: most of a cold collection's CPU. Most elements
are plain data (untagged mappings, lists and scalars, no anchor, alias or merge key): here
those are built from libyaml's events as they come (a loop per mapping or list), with the
safe loader's own implicit resolvers and scalar constructors, so the data is the same.
Anything else (an anchor, an alias, a tag, a merge key, a key given twice, a key that is a
collection, a scalar whose constructor fails, nesting deeper than :data:`MAX_DEPTH`) makes
:func:`build` give up: the element's events read so far are handed back, and the caller
composes the element from them and from the rest of the stream (:class:`Replay`), with the
same errors at the same places as before.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Container
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

from ..core.errors import AgentClinicError

_STR = "tag:yaml.org,2002:str"
#: The scalar types a plain scalar may resolve to that are built here (the safe
#: constructor's own functions); any other (merge ``<<``, value ``=``) gives up.
_BUILT = frozenset({"tag:yaml.org,2002:null", "tag:yaml.org,2002:bool",
                    "tag:yaml.org,2002:int", "tag:yaml.org,2002:float",
                    "tag:yaml.org,2002:timestamp"})
#: Deeper elements are composed (where a hostile depth meets the composer's own limit).
MAX_DEPTH = 64
#: The texts whose resolved tag is remembered: this long at most, this many at most.
_KNOWN_LENGTH, _KNOWN_COUNT = 64, 4096


class GiveUp(AgentClinicError):
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
        # Each case of a file repeats its keys ("objective", "Findings") and many values
        # ("Fatigue", "40-year-old woman"): resolved once (a tag is a function of the text).
        self._known: dict[str, str] = {}

    def __call__(self, value: str) -> str:
        tag = self._known.get(value)
        if tag is None:
            tag = next((str(tag) for tag, regexp in self._by_first.get(value[:1], self._wildcard)
                        if regexp.match(value)), _STR)
            if len(value) <= _KNOWN_LENGTH and len(self._known) < _KNOWN_COUNT:
                self._known[value] = tag
        return tag


def resolving(loader: Any) -> Resolving | None:
    """``loader``'s :class:`Resolving`; None when it has path resolvers (then every element
    is composed)."""
    return None if loader.yaml_path_resolvers else Resolving(loader)


def build(loader: Any, resolve: Resolving) -> Any:
    """The next node of ``loader``'s event stream built as the safe constructor builds it;
    raises :class:`GiveUp` (with the events read) when it is not plain data."""
    events: list[Event] = []
    reading = _Reading(loader, events, resolve)
    try:
        return reading.node(reading.next(), 0)
    except _NotPlain:
        raise GiveUp(events) from None


class _NotPlain(AgentClinicError):
    """Raised inside :class:`_Reading`; :func:`build` gives the events up."""


class _Reading:
    """One element's events read and built, each kept for a give-up. The text scalars
    (most of a case) are taken in the loops themselves: ~40% of the reading's CPU went to
    calls."""

    def __init__(self, loader: Any, events: list[Event], resolve: Resolving) -> None:
        self.loader, self.events, self.resolve = loader, events, resolve
        self._get, self._keep = loader.get_event, events.append
        self.firsts: Container[str] = _ANY if resolve.firsts is None else resolve.firsts

    def next(self) -> Any:
        """The stream's next event, kept."""
        event = self._get()
        self._keep(event)
        return event

    def node(self, event: Any, depth: int) -> Any:
        """The node ``event`` starts, built."""
        kind = type(event)
        if kind is ScalarEvent:
            return self.scalar(event)
        # An alias has an anchor (the one it names).
        if event.anchor is not None or event.tag is not None or depth >= MAX_DEPTH:
            raise _NotPlain
        if kind is MappingStartEvent:
            return self.mapping(depth + 1)
        if kind is SequenceStartEvent:
            return self.sequence(depth + 1)
        raise _NotPlain

    def scalar(self, event: Any) -> Any:
        """A scalar's value, resolved and built."""
        if event.anchor is not None or event.tag is not None:
            raise _NotPlain
        value = event.value
        if event.implicit[0] and value[:1] in self.firsts:
            tag = self.resolve(value)
            if tag != _STR:
                return _scalar(self.loader, tag, event)
        return value

    def sequence(self, depth: int) -> list[Any]:
        """A sequence's items, to its end."""
        get, keep, firsts = self._get, self._keep, self.firsts
        items: list[Any] = []
        while True:
            event = get()
            keep(event)
            kind = type(event)
            if (kind is ScalarEvent and event.anchor is None and event.tag is None
                    and not (event.implicit[0] and event.value[:1] in firsts)):
                items.append(event.value)  # text
            elif kind is SequenceEndEvent:
                return items
            else:
                items.append(self.node(event, depth))

    def mapping(self, depth: int) -> dict[Any, Any]:
        """A mapping's pairs, to its end."""
        get, keep, firsts = self._get, self._keep, self.firsts
        built: dict[Any, Any] = {}
        given = 0
        while True:
            event = get()
            keep(event)
            kind = type(event)
            if kind is not ScalarEvent:
                if kind is MappingEndEvent:
                    break
                raise _NotPlain  # a collection as a key: the constructor's error
            if (event.anchor is None and event.tag is None
                    and not (event.implicit[0] and event.value[:1] in firsts)):
                key = event.value  # text
            else:
                key = self.scalar(event)
                if key != key:
                    raise _NotPlain  # not equal to itself: a count cannot find it twice
            given += 1
            event = get()
            keep(event)
            if (type(event) is ScalarEvent and event.anchor is None and event.tag is None
                    and not (event.implicit[0] and event.value[:1] in firsts)):
                built[key] = event.value  # text
            else:
                built[key] = self.node(event, depth)
        if len(built) != given:
            # Two keys built equal: one given twice (the loader's error), or equal values of
            # other texts (1 and 1.0), which the composed mapping shows.
            raise _NotPlain
        return built


class _Anything:
    """Contains every first character: with a wildcard resolver any scalar is resolved."""

    def __contains__(self, item: object) -> bool:
        return True


_ANY = _Anything()


def _scalar(loader: Any, tag: str, event: Any) -> Any:
    """A plain scalar of another type than text, built by the safe constructor's function."""
    if tag not in _BUILT:
        raise _NotPlain
    try:
        return loader.yaml_constructors[tag](
            loader, ScalarNode(tag, event.value, event.start_mark, event.end_mark, event.style))
    except Exception:  # the composed element raises it where it did
        raise _NotPlain from None


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
