"""The package's background threads, and the one thing that makes them safe beside pytest.

Every thread the package starts (the encounter loop, the cache's writer, imports and
warm-ups done off the main thread) is started here, so that each first installs
:func:`serialised_ast_parse`.

Why: CPython 3.11 and 3.12 count the AST constructor's recursion depth in one counter per
interpreter, not per thread (CPython gh-106905; 3.13 keeps it per thread). Two threads inside
``ast.parse`` at once (a garbage collection in one lets the other run) leave the counter
wrong, and the one that notices raises ``SystemError: AST constructor recursion depth
mismatch``. A run parses from several threads without meaning to: pytest's main thread
parses to format a failure's traceback and to rewrite the asserts of the modules it
imports; the encounter loop's thread imports modules pytest rewrites (the plugin's own,
anyio's) and formats tracebacks (litellm logs every failed call with one, and 3.11's
traceback module parses each line for its carets). When the two met, pytest itself crashed
(exit 3, INTERNAL_ERROR) instead of reporting the run.
"""

from __future__ import annotations

import ast
import functools
import sys
import threading
from collections.abc import Callable
from typing import Any

#: Pythons whose AST constructor shares one recursion counter between threads.
SHARED_AST_COUNTER = sys.version_info < (3, 13)

_lock = threading.RLock()  # re-entered: a collection inside a parse may run code that parses


def start_thread(target: Callable[..., object], *args: Any, name: str) -> threading.Thread:
    """Start ``target(*args)`` in a daemon thread named ``name`` (daemon: a run that ends,
    or is interrupted, never waits for an import or a warm-up)."""
    serialised_ast_parse()
    thread = threading.Thread(target=target, args=args, name=name, daemon=True)
    thread.start()
    return thread


def serialised_ast_parse() -> None:
    """From now on in this process, one ``ast.parse`` at a time (on the Pythons above; a
    no-op on the others and when already done).

    Installed for the rest of the process, not undone at the session's end: the threads are
    daemons that may outlive it, and the lock costs a parse about a microsecond."""
    if not SHARED_AST_COUNTER or getattr(ast.parse, "__agentclinic_serialised__", False):
        return
    with _lock:
        if not getattr(ast.parse, "__agentclinic_serialised__", False):
            ast.parse = _serialised(ast.parse)


def _serialised(parse: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(parse)
    def serialised_parse(*args: Any, **kwargs: Any) -> Any:
        with _lock:
            return parse(*args, **kwargs)

    serialised_parse.__agentclinic_serialised__ = True  # type: ignore[attr-defined]
    return serialised_parse
