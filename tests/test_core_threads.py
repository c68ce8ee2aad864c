"""core.threads: the package's threads start with ``ast.parse`` serialised, so that a parse in
one of them never corrupts a parse in pytest's main thread (CPython gh-106905)."""

from __future__ import annotations

import ast
import gc
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from pytest_agentclinic.core import threads

#: Big enough that its AST's construction triggers several collections.
SOURCE = "\n".join(f"def f{i}(a):\n    return [a * {i} for _ in a]" for i in range(200))

needs_shared_counter = pytest.mark.skipif(
    not threads.SHARED_AST_COUNTER, reason="this Python keeps the AST depth per thread")


def _unserialised() -> Callable[..., Any]:
    return getattr(ast.parse, "__wrapped__", ast.parse)


@pytest.fixture()
def collections_inside_parses() -> Iterator[None]:
    old = gc.get_threshold()
    gc.set_threshold(20)
    try:
        yield
    finally:
        gc.set_threshold(*old)


def interleave(parse: Callable[..., Any]) -> list[BaseException]:
    """Thread A parses ``SOURCE`` from deep in its stack; at the first collection inside that
    parse, it lets thread B parse a whole text and waits (a little) for B to finish: the
    interleaving that crashed pytest, made certain instead of rare."""
    go, done = threading.Event(), threading.Event()
    errors: list[BaseException] = []
    armed = [False]

    def b() -> None:
        go.wait()
        try:
            parse("x = 1")
        except SystemError as exc:
            errors.append(exc)
        done.set()

    def a(depth: int = 30) -> None:
        if depth:
            return a(depth - 1)
        armed[0] = True
        try:
            parse(SOURCE)
        except SystemError as exc:
            errors.append(exc)

    def on_collection(phase: str, info: dict[str, int]) -> None:
        if armed[0] and threading.current_thread() is thread_a:
            armed[0] = False
            go.set()
            done.wait(0.3)  # serialised, B waits for A's parse: A goes on after 0.3 s

    thread_a, thread_b = threading.Thread(target=a), threading.Thread(target=b)
    gc.callbacks.append(on_collection)
    try:
        thread_b.start()
        thread_a.start()
        thread_a.join()
        go.set()
        thread_b.join()
    finally:
        gc.callbacks.remove(on_collection)
    return errors


@needs_shared_counter
def test_two_threads_parsing_at_once_corrupt_each_other_without_the_lock(
        collections_inside_parses: None) -> None:
    # The hazard itself, on this Python: the reason for the lock.
    errors = interleave(_unserialised())
    assert any("recursion depth mismatch" in str(e) for e in errors), errors


@needs_shared_counter
def test_a_package_thread_serialises_parses_and_the_interleaving_is_harmless(
        collections_inside_parses: None) -> None:
    threads.start_thread(lambda: None, name="agentclinic-test").join()
    assert getattr(ast.parse, "__agentclinic_serialised__", False)
    assert interleave(ast.parse) == []


def test_the_lock_is_installed_once_and_parses_as_before() -> None:
    threads.serialised_ast_parse()
    first = ast.parse
    threads.serialised_ast_parse()
    assert ast.parse is first
    tree = ast.parse("x = 1", mode="exec", type_comments=False)
    assert isinstance(tree.body[0], ast.Assign)
    with pytest.raises(SyntaxError):
        ast.parse("x = ")


def test_start_thread_runs_the_target_in_a_named_daemon_thread() -> None:
    seen: list[tuple[str, bool, int]] = []
    thread = threads.start_thread(
        lambda n: seen.append((threading.current_thread().name,
                               threading.current_thread().daemon, n)), 7, name="agentclinic-x")
    thread.join()
    assert seen == [("agentclinic-x", True, 7)]
