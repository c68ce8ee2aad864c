"""Recursive YAML aliases (``&a [*a]``): found on the node graph, before loading.

``yaml.safe_load`` builds a self-containing structure from them, which fails much later (at
run time, without file or line); composing the document keeps every node's line.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

#: An alias token (``*name``) where YAML allows one; documents without any need no check.
_ALIAS = re.compile(r"(?:^|[\s\[{,:-])\*[^\s,\[\]{}]+", re.M)


def recursive_alias(text: str, loader: Any = yaml.SafeLoader) -> tuple[int, str] | None:
    """Line and field of a recursive alias (an anchor used inside itself), if any."""
    if "&" not in text or not _ALIAS.search(text):
        return None
    node = yaml.compose(text, Loader=loader)
    open_nodes: set[int] = set()  # on the path from the root: meeting one again is a loop
    done: set[int] = set()  # walked already through another alias: an alias bomb stays linear

    def walk(n: Any, where: str) -> tuple[int, str] | None:
        if id(n) in open_nodes:
            return n.start_mark.line + 1, where or "<document>"
        if id(n) in done:
            return None
        open_nodes.add(id(n))
        children: list[tuple[str, Any]] = []
        if isinstance(n, yaml.MappingNode):
            children = [(f"{where}.{k.value}".lstrip("."), v) for k, v in n.value]
        elif isinstance(n, yaml.SequenceNode):
            children = [(f"{where}[{i}]", v) for i, v in enumerate(n.value)]
        for name, child in children:
            found = walk(child, name)
            if found:
                return found
        open_nodes.discard(id(n))
        done.add(id(n))
        return None

    return walk(node, "") if node is not None else None
