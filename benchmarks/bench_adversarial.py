"""The adversarial table: how often each gaming strategy scores, per moderator and protocol.

Every strategy of ``tests/fixtures/adversarial.yaml`` is filled in for every case of
``cases/`` and graded through the pipeline both protocols share, with the offline moderator
and with a moderator model that always answers Yes (a fake OpenAI-compatible server on
127.0.0.1). Prints one row per strategy: hits / cases for each column, and the cases hit
(for the answers that must score, the cases missed). Targets: each answer that must not
score at most 2% of the cases, each that must score at least 95%.

    python benchmarks/bench_adversarial.py
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from adversarial import answer, library, suite

from pytest_agentclinic.agents.llm_moderator import LLMModerator
from pytest_agentclinic.core.roles import Moderator
from pytest_agentclinic.grading.judging.moderator import OfflineModerator
from pytest_agentclinic.grading.judging.pipeline import grade_answer
from pytest_agentclinic.llm.cache import CacheMode, ResponseCache
from pytest_agentclinic.llm.caller import CallSettings, ModelCaller
from pytest_agentclinic.llm.retry import RetryPolicy
from pytest_agentclinic.testing.fake_server import FakeOpenAIServer, FakeReply

PROTOCOLS = ("agentclinic", "craftmd")


async def hits(strategy: str, protocol: str, moderator: Moderator) -> tuple[list[str], int]:
    """The cases ``strategy`` scores on, and how many cases it applies to."""
    scored: list[str] = []
    applicable = 0
    for case in library():
        said = answer(strategy, case, protocol)
        if said is None:
            continue
        applicable += 1
        grade = await grade_answer(said, case, moderator, 0)
        if grade.verdict.correct:
            scored.append(case.id)
    return scored, applicable


async def table(moderators: dict[str, Moderator]) -> None:
    """Print the strategy x (protocol, moderator) table."""
    columns = [(p, m) for p in PROTOCOLS for m in moderators]
    header = " | ".join(f"{p} / {m}" for p, m in columns)
    must_score = suite().must_score
    print(f"| strategy | target | {header} |")
    print("|---|---|" + "---|" * len(columns))
    off: list[str] = []
    for strategy in suite().strategies:
        cells: list[str] = []
        notes: set[str] = set()
        for protocol, name in columns:
            scored, applicable = await hits(strategy, protocol, moderators[name])
            share = len(scored) / max(applicable, 1)
            cells.append(f"{len(scored)}/{applicable} ({share:.0%})")
            if not _on_target(strategy, share, strategy in must_score):
                off.append(f"{strategy} ({protocol} / {name}: {share:.1%})")
            if strategy in must_score:
                notes.update(c.id for c in library() if c.id not in scored
                             and answer(strategy, c, protocol) is not None)
            else:
                notes.update(scored)
        kind = "must score" if strategy in must_score else "must not"
        label = "misses" if strategy in must_score else "hits"
        print(f"| {strategy} | {kind} | " + " | ".join(cells) + " |"
              + (f"  {label}: {', '.join(sorted(notes))}" if notes else ""))
    print(f"\nTargets (must score >= {suite().minimum_control:.0%}; must not <= "
          f"{suite().maximum_share:.0%}, one-word answers <= {ONE_WORD_SHARE:.0%}; both "
          f"protocols): " + ("all met" if not off else f"{len(off)} off: {'; '.join(off)}"))


#: The one-word answers ("{word}", a modifier of the true name) may score on at most this
#: share of the cases (issue 31); every other must-not shape on at most the fixture's share.
ONE_WORD_SHARE = 0.05
_ONE_WORD = frozenset({"one_word"})


def _on_target(strategy: str, share: float, scoring: bool) -> bool:
    if scoring:
        return share >= float(suite().minimum_control)
    limit = ONE_WORD_SHARE if strategy in _ONE_WORD else float(suite().maximum_share)
    return share <= limit


def main() -> None:
    """Run the table with the offline moderator and a gullible moderator model."""
    os.environ.setdefault("OPENAI_API_KEY", "sk-local-fake")  # the fake server checks none
    started = time.perf_counter()
    with FakeOpenAIServer(lambda _request: FakeReply("Yes")) as server, \
            tempfile.TemporaryDirectory() as cache:
        caller = ModelCaller(CallSettings(api_base=server.url, policy=RetryPolicy(attempts=1)),
                             ResponseCache(Path(cache), CacheMode.OFF))
        moderators: dict[str, Moderator] = {
            "offline": OfflineModerator(),
            "always-Yes model": LLMModerator("openai/always-yes", caller)}
        asyncio.run(table(moderators))
        print(f"\n{len(library())} cases; the always-Yes model was asked {server.calls} times "
              f"(only about answers the rules could not decide); "
              f"{time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()
