"""docs/local-models.md gives advice that works on a CPU (issue 23: its small max-tokens
advice produced length errors, it did not mention the encounter deadline that ended 3 CPU
encounters, and two server threads served far worse than one on 2 cores)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).parent.parent
DOC = (ROOT / "docs" / "local-models.md").read_text()


def _llama_cpp_advice() -> str:
    start = DOC.index("**llama.cpp on a CPU**")
    return DOC[start:DOC.index("## The real-model test")]


def test_the_advice_names_what_ends_cpu_encounters() -> None:
    advice = _llama_cpp_advice()
    assert "--agent-encounter-timeout" in advice and "900 s" in advice
    assert "finish_reason=length" in advice
    assert not re.search(r"small `--agent-max-tokens`", DOC)


def test_one_server_thread_in_the_doc_and_in_the_real_model_test() -> None:
    assert "`--n_threads 1`" in _llama_cpp_advice()
    source = (ROOT / "tests" / "test_plugin_real_model.py").read_text()
    assert '"--n_threads", "1"' in source and "--agent-encounter-timeout" in source


def test_every_llama_cpp_command_sets_a_context_the_encounters_fit() -> None:
    """Without --n_ctx the server stops at 2,048 tokens: a 20-turn encounter errored at its
    14th call; the real-model test starts its server with 4,096."""
    commands = re.findall(r"`(python -m llama_cpp\.server --model[^`]*)`", DOC)
    assert commands and all("--n_ctx 4096" in c for c in commands), commands
    assert all("-c 4096" in c for c in re.findall(r"`(llama-server -m[^`]*)`", DOC))
    source = (ROOT / "tests" / "test_plugin_real_model.py").read_text()
    assert '"--n_ctx", "4096"' in source
