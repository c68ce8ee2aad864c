"""YAML aliases that cannot make a case file: found on the node graph, before loading.

* A recursive alias (``&a [*a]``): ``yaml.safe_load`` builds a self-containing structure from
  it, which fails much later (at run time, without file or line).
* An alias bomb: a few nodes that aliases expand a thousandfold ("billion laughs"), or
  50,000 aliases of one whole case. The structure built shares the nodes, but everything that
  walks a case (validation, the agents, the records) walks every copy: minutes, gigabytes.

Composing the document keeps every node's line; the walk visits each node once.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

#: An alias token (``*name``) where YAML allows one; documents without any need no check.
_ALIAS = re.compile(r"(?:^|[\s\[{,:-])\*[^\s,\[\]{}]+", re.M)
#: A document may expand its own nodes this many times over by aliases...
BOMB_RATIO = 10
#: ... but a small one may always reach this many nodes expanded.
BOMB_FLOOR = 100_000


def has_aliases(text: str) -> bool:
    """Whether the document may use an alias (found without parsing; usually not)."""
    return "&" in text and _ALIAS.search(text) is not None


def harmless(nodes: int, aliased: int, nested: bool) -> bool:
    """Whether aliases counted while composing (``nodes`` composed, ``aliased`` nodes the
    aliases add, ``nested``: an alias inside an anchored node) can be neither a loop nor a
    bomb. Without nesting an alias adds its anchor's nodes once and nothing compounds, so
    the count is exact; nested aliases (rare in case files) need :func:`alias_problem`."""
    return not nested and nodes + aliased <= max(BOMB_FLOOR, BOMB_RATIO * nodes)


def alias_problem(text: str, loader: Any = yaml.SafeLoader) -> tuple[int, str, str] | None:
    """Line, field and message of a recursive alias or an alias bomb, if the document has
    one; None for a document without aliases (the usual case, found without parsing).
    Composes the document again: :func:`harmless` says when the load's own count suffices."""
    if not has_aliases(text):
        return None
    node = yaml.compose(text, Loader=loader)
    if node is None:
        return None
    walk = _Walk()
    cycle = walk.size(node, "")
    if cycle is not None:
        return (*cycle, "recursive YAML alias (an anchor used inside itself)")
    expanded, own = walk.sizes[id(node)], len(walk.sizes)
    if expanded > max(BOMB_FLOOR, BOMB_RATIO * own):
        return (node.start_mark.line + 1, "<document>",
                f"YAML alias bomb refused: aliases expand the document's {own:,} nodes to "
                f"{expanded:,} (more than {BOMB_RATIO}x and {BOMB_FLOOR:,}); write the "
                f"repeated parts out")
    return None


class _Walk:
    """Each node's size with its aliases expanded, each node visited once."""

    def __init__(self) -> None:
        self.open_nodes: set[int] = set()  # on the path from the root: meeting one is a loop
        self.sizes: dict[int, int] = {}  # done: an alias met again adds its size, unwalked

    def size(self, n: Any, where: str) -> tuple[int, str] | None:
        """Fill :attr:`sizes` for ``n``; the line and field of a loop, if one is found."""
        if id(n) in self.open_nodes:
            return n.start_mark.line + 1, where or "<document>"
        if id(n) in self.sizes:
            return None
        self.open_nodes.add(id(n))
        children: list[tuple[str, Any]] = []
        if isinstance(n, yaml.MappingNode):
            children = [(f"{where}.{k.value}".lstrip("."), v) for k, v in n.value]
            children += [(where, k) for k, _ in n.value]
        elif isinstance(n, yaml.SequenceNode):
            children = [(f"{where}[{i}]", v) for i, v in enumerate(n.value)]
        total = 1
        for name, child in children:
            found = self.size(child, name)
            if found:
                return found
            total += self.sizes[id(child)]
        self.open_nodes.discard(id(n))
        self.sizes[id(n)] = total
        return None
