"""The adversarial table: how often each gaming strategy scores, per moderator and protocol.

Every strategy of ``tests/fixtures/adversarial.yaml`` is filled in for every case of
``cases/`` and graded through the pipeline both protocols share, with the offline moderator
and with a moderator model that always answers Yes (a fake OpenAI-compatible server on
127.0.0.1). Prints one row per strategy: hits / cases for each column, and the cases hit
(for the answers that must score, the cases missed). Targets: each answer that must not
score at most 2% of the cases, each that must score at least 95%.

The library's truths are the ones the rules were studied on. ``--truths craftmd`` (the
distinct condition truths of CRAFT-MD's 2,004 vignettes, with their choices), ``--truths
agentclinic`` (AgentClinic's MedQA and NEJM truths) or ``--truths mediq`` (MediQ's condition
truths that neither of those sets has: the third set, nobody tuned to) fills the same
shapes with a larger set read at run time from ``../shared/datasets`` (never copied into the
repository), graded by the offline moderator. ``--truths sources`` needs no data at all:
about 600 disease concepts sampled from the bundled terminology's sources (ICD-10-CM,
MeSH, the Disease Ontology, MONDO), each with its siblings as choices
(``tests/source_truths.py``). The truths are split in two halves by a
stable hash (half A to study failures on, half B to check that a fix carries over); each row
gives both halves in each protocol, and a few of half A's misses (answers that must score)
or hits (must not):

    python benchmarks/bench_adversarial.py [--shapes other_gt_truth,query_truth]
    python benchmarks/bench_adversarial.py --truths craftmd [--shapes slip,one_word] [--examples 3]
    python benchmarks/bench_adversarial.py --truths mediq --examples 10
    python benchmarks/bench_adversarial.py --abbreviations

``--abbreviations`` grades the abbreviations a clinician writes for one disease
(``benchmarks/data/name_classes.tsv``), each alone, in both protocols: the cost on answers
that must score of any rule against abbreviations of several diseases; each miss is printed
with why (the distinct diseases the sources also give it for, or how it was graded).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from adversarial import answer, library, suite
from adversarial_truths import TRUTH_SOURCES, Truths, held_out_truths
from source_truths import NAME as SOURCES_SET
from source_truths import source_truths

from pytest_agentclinic.agents.llm_moderator import LLMModerator
from pytest_agentclinic.core.roles import Moderator
from pytest_agentclinic.grading.judging.initials import distinct_diseases, spelling
from pytest_agentclinic.grading.judging.moderator import OfflineModerator
from pytest_agentclinic.grading.judging.pipeline import grade_answer
from pytest_agentclinic.grading.terms.readings import expansions
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


async def table(moderators: dict[str, Moderator], shapes: list[str]) -> None:
    """Print the strategy x (protocol, moderator) table, one row per shape of ``shapes``."""
    columns = [(p, m) for p in PROTOCOLS for m in moderators]
    header = " | ".join(f"{p} / {m}" for p, m in columns)
    must_score = suite().must_score
    print(f"| strategy | target | {header} |")
    print("|---|---|" + "---|" * len(columns))
    off: list[str] = []
    for strategy in shapes:
        cells: list[str] = []
        notes: set[str] = set()
        for protocol, name in columns:
            scored, applicable = await hits(strategy, protocol, moderators[name])
            share = len(scored) / max(applicable, 1)
            cells.append(f"{len(scored)}/{applicable} ({share:.0%})")
            if applicable and not _on_target(strategy, share, strategy in must_score):
                off.append(f"{strategy} ({protocol} / {name}: {share:.1%}){_gap(strategy)}")
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


#: The one-word answers ("{word}", a modifier of the true name, also with words to the
#: grader after it; "{head}", its head noun) may score on at most this share of the cases
#: (issue 31); every other must-not shape on at most the fixture's share. "It is a {head}."
#: is the head noun in a sentence: the same one word.
ONE_WORD_SHARE = 0.05
_ONE_WORD = frozenset({"one_word", "injection", "injection_inline", "head_noun",
                       "head_noun_sentence"})


def _gap(strategy: str) -> str:
    """A note on a shape the fixture lists as a known gap (its reason is in the fixture)."""
    return " [known gap]" if strategy in suite().known_gaps else ""


def _on_target(strategy: str, share: float, scoring: bool) -> bool:
    if scoring:
        return share >= float(suite().minimum_control)
    limit = ONE_WORD_SHARE if strategy in _ONE_WORD else float(suite().maximum_share)
    return share <= limit


async def held_out_table(truths: Truths, shapes: list[str], examples: int) -> list[str]:
    """Print one row per shape: its rate on each half in each protocol (offline moderator),
    and a few of half A's misses or hits; return the shapes off target."""
    pool, moderator = truths.pool, OfflineModerator()
    must_score = suite().must_score
    print("| shape | target | " + " | ".join(f"{p} {h}" for p in PROTOCOLS for h in "AB")
          + " |")
    print("|---|---|" + "---|" * 2 * len(PROTOCOLS))
    off: list[str] = []
    for shape in shapes:
        scoring = shape in must_score
        cells: list[str] = []
        noted: list[str] = []
        for protocol in PROTOCOLS:
            tally = {"A": [0, 0], "B": [0, 0]}
            for case in pool.cases:
                said = answer(shape, case, protocol, pool)
                if said is None:
                    continue
                half = truths.half(case)
                grade = await grade_answer(said, case, moderator, 0)
                tally[half][1] += 1
                tally[half][0] += grade.verdict.correct
                if (half == "A" and grade.verdict.correct != scoring
                        and len(noted) < examples and protocol == PROTOCOLS[0]):
                    noted.append(f"{case.diagnosis!r} <- {_short(said)} [{grade.extracted}]")
            for half, (hit, applicable) in tally.items():
                share = hit / max(applicable, 1)
                cells.append(f"{hit}/{applicable} ({share:.1%})")
                if applicable and not _on_target(shape, share, scoring):
                    off.append(f"{shape} ({protocol} {half}: {share:.1%}){_gap(shape)}")
        kind = "must score" if scoring else "must not"
        print(f"| {shape} | {kind} | " + " | ".join(cells) + " |")
        for note in noted:
            print(f"    {'missed' if scoring else 'scored'}: {note}")
    return off


def _short(said: str, width: int = 110) -> str:
    text = said.replace("\n", " / ")
    return repr(text if len(text) <= width else text[:width - 3] + "...")


def held_out(source: str, shapes: list[str], examples: int) -> None:
    """The table on the truths of ``source``, or one line saying why it cannot run."""
    truths = source_truths() if source == SOURCES_SET else held_out_truths(source)
    if isinstance(truths, str):
        print(f"skipped: {truths}")
        return
    started = time.perf_counter()
    n = len(truths.pool.cases)
    in_a = sum(truths.half(c) == "A" for c in truths.pool.cases)
    # the terminology's concepts: "garbled" are names no clinician writes as a diagnosis
    read, garbled = (("concepts", "not as a clinician writes") if source == SOURCES_SET
                     else ("cases", "garbled"))
    print(f"{source}: {n} distinct condition truths (half A {in_a}, half B {n - in_a}) of "
          f"{truths.read} {read} read ({truths.duplicates} repeated, {truths.not_conditions} "
          f"no condition, {truths.garbled} {garbled}"
          + (f", {truths.elsewhere} already in another set" if truths.elsewhere else "")
          + "); offline moderator\n")
    off = asyncio.run(held_out_table(truths, shapes, examples))
    print(f"\nTargets (must score >= {suite().minimum_control:.0%}; must not <= "
          f"{suite().maximum_share:.0%}, one-word answers <= {ONE_WORD_SHARE:.0%}; both "
          f"protocols, each half): " + ("all met" if not off else
                                       f"{len(off)} off: {'; '.join(off)}"))
    print(f"{time.perf_counter() - started:.1f} s")


#: Abbreviations a clinician writes for one disease (the abbreviation class of the synonym
#: benchmark's pairs): written alone, each must score for its disease, whatever the guard
#: rail on abbreviations of several diseases does (issue 31: unambiguous abbreviations
#: >= 95%). ``bench_synonyms.py --classes`` judges the names alone; this grades the answer.
NAME_CLASSES = Path(__file__).with_name("data") / "name_classes.tsv"


def abbreviation_pairs(path: Path = NAME_CLASSES) -> list[tuple[str, str]]:
    """The (abbreviation, disease) pairs of ``path``'s abbreviation class."""
    rows = (line.split("\t") for line in path.read_text(encoding="utf-8").splitlines()
            if line and not line.startswith("#"))
    return [(given, truth) for name, given, truth in rows if name == "abbreviation"]


async def abbreviations_scored(pairs: list[tuple[str, str]]) -> list[str]:
    """Print how many abbreviations alone score for their disease in each protocol (offline
    moderator), then each miss with why: the distinct diseases the sources also give it for
    (issue 31's guard rail, :func:`.initials.distinct_diseases`), or what it was read as;
    return the misses ("ABBR for disease")."""
    case, moderator = library()[0], OfflineModerator()
    missed: list[str] = []
    why: list[str] = []
    cells: list[str] = []
    for protocol in PROTOCOLS:
        scored = 0
        for given, truth in pairs:
            posed = case.model_copy(update={"diagnosis": truth, "synonyms": [], "choices": []})
            said = suite().wrappers[protocol].format(answer=given)
            grade = await grade_answer(said, posed, moderator, 0)
            if grade.verdict.correct:
                scored += 1
            elif protocol == PROTOCOLS[0]:
                missed.append(f"{given} for {truth}")
                why.append(_why(given, truth, grade.verdict.reason))
        cells.append(f"{protocol} {scored}/{len(pairs)} ({scored / max(len(pairs), 1):.1%})")
    two = sum(w.startswith("two diseases") for w in why)
    one = len(pairs) - two
    print(f"abbreviations alone that must score (target >= {suite().minimum_control:.0%}): "
          + ", ".join(cells) + f"; of the {one} the terminology gives for one disease, "
          f"{one - (len(missed) - two)} score ({(one - len(missed) + two) / max(one, 1):.1%})")
    for miss, reason in zip(missed, why, strict=True):
        print(f"    missed: {miss}: {reason}")
    return missed


def _why(given: str, truth: str, reason: str) -> str:
    others = distinct_diseases(given, expansions(given) or spelling(given), [truth])
    if others:
        return f"two diseases, the sources also give it for {'; '.join(others)}"
    return f"graded: {reason}"


def main() -> None:
    """Run the table with the offline moderator and a gullible moderator model, or with the
    offline moderator on a larger truth set (``--truths``)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--truths", choices=sorted([*TRUTH_SOURCES, SOURCES_SET]),
                        help="fill the shapes with this dataset's truths (../shared), or "
                             "with disease concepts of the bundled terminology (sources)")
    parser.add_argument("--shapes", default="",
                        help="comma-separated shapes to run (default: all)")
    parser.add_argument("--examples", type=int, default=3,
                        help="misses or hits of half A to print per shape")
    parser.add_argument("--abbreviations", action="store_true",
                        help="only grade the abbreviations that must score, each alone")
    args = parser.parse_args()
    if args.abbreviations:
        asyncio.run(abbreviations_scored(abbreviation_pairs()))
        return
    shapes = [s for s in args.shapes.split(",") if s] or list(suite().strategies)
    unknown = sorted(set(shapes) - set(suite().strategies))
    if unknown:
        parser.error(f"unknown shapes: {', '.join(unknown)}")
    if args.truths:
        held_out(args.truths, shapes, args.examples)
        return
    os.environ.setdefault("OPENAI_API_KEY", "sk-local-fake")  # the fake server checks none
    started = time.perf_counter()
    with FakeOpenAIServer(lambda _request: FakeReply("Yes")) as server, \
            tempfile.TemporaryDirectory() as cache:
        caller = ModelCaller(CallSettings(api_base=server.url, policy=RetryPolicy(attempts=1)),
                             ResponseCache(Path(cache), CacheMode.OFF))
        moderators: dict[str, Moderator] = {
            "offline": OfflineModerator(),
            "always-Yes model": LLMModerator("openai/always-yes", caller)}
        asyncio.run(table(moderators, shapes))
        print(f"\n{len(library())} cases; the always-Yes model was asked {server.calls} times "
              f"(only about answers the rules could not decide); "
              f"{time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()
