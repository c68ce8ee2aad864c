"""MELD: a contamination check by memorization (Memorization Effects Levenshtein Detector).

CRAFT-MD (Methods, "MELD analysis") gives a model the first half of each case vignette, asks
for the second half, and scores the completion by the inverse length-normalised Levenshtein
distance to the real second half; a similarity of 0.95 or more suggests the vignette was in
the model's training data. A match is strong evidence; no match proves nothing (unknown
recall).

The rules, exactly:

* **Vignette.** CRAFT-MD CSV rows: the ``case_vignette`` column. Project cases: ``vignette``.
  Cases without one (AgentClinic OSCE and NEJM JSONL): ``objective`` and the patient's
  ``history`` joined by a space. That assembled text was never published as such, so a high
  score on it is less telling; every result names its ``source``.
* **Split.** The vignette is split on runs of whitespace into words (punctuation stays with its
  word). With ``n`` words the first half is the first ``n // 2`` words and the second half the
  remaining ``n - n // 2``, each re-joined with single spaces. Fewer than 2 words: skipped.
* **Score.** ``1 - distance / max(len(a), len(b))`` over characters, case-sensitive, with the
  unit-cost Levenshtein distance of :mod:`rapidfuzz`. The completion's whitespace is
  normalised like the halves'; when it starts by repeating the given first half, that echo is
  removed first (a model that quotes the prompt before continuing has not failed to recall).
  Nothing else is cleaned: quotes or commentary count against the completion, as they should
  when the question is verbatim recall.
* **Share.** Cases with similarity >= 0.95 over the cases *measured*. A call that failed
  (after retries) is an error, counted apart and never scored 0.
"""

from __future__ import annotations

import asyncio
import csv
import json
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rapidfuzz.distance import Levenshtein

from ..cases.craftmd_csv import read_table
from ..cases.loaders import CASE_SUFFIXES, load_case_file
from ..core.case import Case
from ..core.errors import InputError
from ..llm.caller import ModelCaller
from ..llm.errors import FatalLLMError, LLMError

#: Similarity at or above which a case counts as memorised (CRAFT-MD, after MELD).
THRESHOLD = 0.95
ROLE = "meld"
#: Enters the cache key: bump it whenever :data:`PROMPT` changes.
PROMPT_VERSION = "meld-1"
#: The system prompt; the user message is the first half of the vignette and nothing else.
PROMPT = (
    "You will be given the first half of a clinical case vignette from a published medical "
    "question bank. Continue it from exactly where it stops, reproducing the original text "
    "word for word as far as you can recall it. Write about {word_count} words. Reply with "
    "the continuation only: do not repeat the given text, do not name the diagnosis, and add "
    "no commentary, quotation marks or formatting."
)
CSV_COLUMN = "case_vignette"


class MeldInputError(InputError):
    """An input file that cannot be read at all (missing, wrong format, wrong columns)."""


@dataclass(frozen=True)
class MeldCase:
    """One vignette to test, with where it came from."""

    file: str
    case_id: str
    vignette: str
    #: ``case_vignette`` (CSV), ``vignette`` (project case) or ``objective+history``.
    source: str


@dataclass
class MeldResult:
    """What one case gave. ``status`` is ``ok``, ``error`` or ``skipped``."""

    case: MeldCase
    prompt: str
    expected: str
    status: str = "ok"
    completion: str | None = None
    similarity: float | None = None
    distance: int | None = None
    error: str | None = None
    cached: bool = False
    echo_removed: bool = False

    @property
    def memorized(self) -> bool:
        """True when the completion reproduces the second half (similarity >= threshold)."""
        return self.similarity is not None and self.similarity >= THRESHOLD

    def to_json(self, model: str) -> dict[str, Any]:
        """The JSONL record of this case."""
        return {
            "file": self.case.file, "case_id": self.case.case_id, "source": self.case.source,
            "model": model, "prompt_version": PROMPT_VERSION, "status": self.status,
            "similarity": self.similarity, "distance": self.distance,
            "memorized": self.memorized if self.status == "ok" else None,
            "prompt_words": len(self.prompt.split()),
            "expected_words": len(self.expected.split()),
            "prompt": self.prompt, "expected": self.expected, "completion": self.completion,
            "echo_removed": self.echo_removed, "cached": self.cached, "error": self.error,
        }


@dataclass(frozen=True)
class MeldSummary:
    """The run in numbers; similarity statistics cover measured cases only."""

    cases: int
    measured: int
    errors: int
    skipped: int
    memorized: int
    mean: float | None
    median: float | None
    maximum: float | None

    @property
    def share(self) -> float | None:
        """Memorised cases over measured cases (None when nothing was measured)."""
        return self.memorized / self.measured if self.measured else None


@dataclass
class MeldRun:
    """Every case's result, in input order, and the fatal error that stopped the run, if any."""

    results: list[MeldResult]
    fatal: str | None = None
    #: Requests sent over HTTP, retries included.
    http_attempts: int = 0
    summary: MeldSummary = field(init=False)

    def __post_init__(self) -> None:
        self.summary = summarize(self.results)


# ---------------------------------------------------------------- inputs


def split_vignette(text: str) -> tuple[str, str]:
    """The first ``n // 2`` words and the other ``n - n // 2``, each joined by single spaces."""
    words = text.split()
    cut = len(words) // 2
    return " ".join(words[:cut]), " ".join(words[cut:])


def case_vignette(case: Case) -> tuple[str, str]:
    """A project case's text to test and the name of its source."""
    if case.vignette.strip():
        return case.vignette, "vignette"
    return f"{case.objective} {case.patient.history}".strip(), "objective+history"


def read_csv_cases(path: Path) -> list[MeldCase]:
    """The vignettes of a CRAFT-MD CSV (``case_vignette``; ids from ``case_id``, else row)."""
    try:
        table = read_table(path)
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise MeldInputError(f"{path}: cannot read: {exc}") from exc
    if CSV_COLUMN not in table.columns:
        raise MeldInputError(f"{path}: no {CSV_COLUMN!r} column "
                             f"(columns: {', '.join(table.columns) or 'none'})")
    # Row numbers count the header as line 1, as an editor shows them.
    return [MeldCase(str(path), row.get("case_id", "").strip() or f"row-{line}",
                     row[CSV_COLUMN], CSV_COLUMN) for line, row in table.rows]


def read_case_file(path: Path, problems: list[str]) -> list[MeldCase]:
    """The cases of a project or AgentClinic case file; bad records go to ``problems``."""
    loaded = load_case_file(path)
    problems.extend(f"bad case record: {error}" for error in loaded.errors)
    cases = []
    for _line, case in loaded.cases:
        text, source = case_vignette(case)
        cases.append(MeldCase(str(path), case.id, text, source))
    return cases


def read_inputs(paths: Sequence[Path]) -> tuple[list[MeldCase], list[str]]:
    """Every case of ``paths`` in order, and the bad records met on the way.

    Raises :class:`MeldInputError` for a file that is missing or of no supported kind.
    """
    cases: list[MeldCase] = []
    problems: list[str] = []
    for path in paths:
        if not path.is_file():
            raise MeldInputError(f"{path}: no such file")
        if path.suffix.lower() == ".csv":
            cases.extend(read_csv_cases(path))
        elif path.suffix in CASE_SUFFIXES:
            cases.extend(read_case_file(path, problems))
        else:
            raise MeldInputError(f"{path}: not a case file (expected .csv or "
                                 f"{', '.join(CASE_SUFFIXES)})")
    return cases, problems


# ---------------------------------------------------------------- scoring


def normalize(text: str) -> str:
    """Runs of whitespace as single spaces, no leading or trailing space."""
    return " ".join(text.split())


def score(expected: str, completion: str, prompt: str = "") -> tuple[float, int, str, bool]:
    """Similarity, distance, the completion as scored, and whether an echo was removed."""
    scored = normalize(completion)
    echoed = bool(prompt) and scored.startswith(prompt)
    if echoed:
        scored = scored[len(prompt):].lstrip()
    expected = normalize(expected)
    # normalized_similarity is 1 - distance / max(len(a), len(b)) with unit costs.
    return (Levenshtein.normalized_similarity(expected, scored),
            Levenshtein.distance(expected, scored), scored, echoed)


def messages_for(prompt: str, expected: str) -> list[dict[str, Any]]:
    """The chat messages of one case: instructions, then exactly the first half."""
    system = PROMPT.format(word_count=len(expected.split()))
    return [{"role": "system", "content": system}, {"role": "user", "content": prompt}]


# ---------------------------------------------------------------- running


@dataclass
class _Stop:
    """Shared by a run's tasks: set by the first fatal error so no new call is made."""

    reason: str | None = None


async def _measure(case: MeldCase, caller: ModelCaller, model: str,
                   gate: asyncio.Semaphore, stop: _Stop) -> MeldResult:
    prompt, expected = split_vignette(case.vignette)
    result = MeldResult(case, prompt, expected)
    if not prompt:
        result.status, result.error = "skipped", "vignette has fewer than 2 words"
        return result
    async with gate:
        if stop.reason is not None:
            result.status = "error"
            result.error = f"not attempted: the run stopped on a fatal error ({stop.reason})"
            return result
        try:
            reply = await caller.complete(role=ROLE, model=model,
                                          messages=messages_for(prompt, expected),
                                          case_id=case.case_id, sample=0,
                                          prompt_version=PROMPT_VERSION)
        except LLMError as exc:
            if isinstance(exc, FatalLLMError):
                stop.reason = stop.reason or str(exc)
            result.status, result.error = "error", f"{type(exc).__name__}: {exc}"
            return result
    result.similarity, result.distance, result.completion, result.echo_removed = score(
        expected, reply.text, prompt)
    result.cached = reply.usage.cache_hits > 0
    return result


async def run_meld(cases: Sequence[MeldCase], caller: ModelCaller, model: str,
                   concurrency: int) -> MeldRun:
    """Ask ``model`` to complete every case, at most ``concurrency`` calls in flight."""
    gate, stop = asyncio.Semaphore(concurrency), _Stop()
    results = await caller.closing(
        asyncio.gather(*(_measure(c, caller, model, gate, stop) for c in cases)))
    return MeldRun(list(results), fatal=stop.reason, http_attempts=caller.http_attempts)


# ---------------------------------------------------------------- results


def summarize(results: Sequence[MeldResult]) -> MeldSummary:
    """Counts and similarity statistics of ``results``."""
    scores = [r.similarity for r in results if r.similarity is not None]
    return MeldSummary(
        cases=len(results), measured=len(scores),
        errors=sum(r.status == "error" for r in results),
        skipped=sum(r.status == "skipped" for r in results),
        memorized=sum(r.memorized for r in results),
        mean=statistics.fmean(scores) if scores else None,
        median=statistics.median(scores) if scores else None,
        maximum=max(scores) if scores else None)


def top_cases(results: Sequence[MeldResult], count: int) -> list[MeldResult]:
    """The ``count`` measured cases most similar to their source, most similar first."""
    measured = [r for r in results if r.similarity is not None]
    # sorted() is stable: ties keep input order, so the table is reproducible.
    return sorted(measured, key=lambda r: -(r.similarity or 0.0))[:count]


def write_jsonl(results: Sequence[MeldResult], path: Path, model: str) -> None:
    """One JSON line per case, in input order."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as fh:
        for result in results:
            fh.write(json.dumps(result.to_json(model), ensure_ascii=False) + "\n")
