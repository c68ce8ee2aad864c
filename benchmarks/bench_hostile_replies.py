"""The grader's CPU on hostile replies: each shape graded at 4 KB, 16 KB and 64 KB (the
first ``GRADED_CHARS`` = 65,536 characters of an answer are graded, on the event loop that
plays every encounter, so a reply that costs minutes stalls a run).

A shape is a phrase repeated to the length: the reader's own vocabulary (the words and
punctuation its patterns look for) with filler words, with and without commas, sentence
breaks and newlines, and what a runaway model writes (one line repeated, a long chain of
thought, a long table, nested brackets, a long JSON, a run of blank lines). Grading time
linear in the length costs ~4x from 4 KB to 16 KB; a pattern quadratic in the length of a
clause or a line costs ~16x. Goal: every shape under ~0.3 s of CPU at 64 KB, ratio under ~6.

    python benchmarks/bench_hostile_replies.py            # the table of SHAPES
    python benchmarks/bench_hostile_replies.py --sweep    # every word of the reader's patterns

``--sweep`` builds a shape from each word and phrase the patterns of ``grading/reading``,
``grading/judging``, ``grading/terms`` and ``core/text`` look for (read off the compiled
patterns) in each of :data:`TEMPLATES`, grades it at 4 KB and 16 KB, and lists those over
the ratio or the time: the search that found the shapes of :data:`SHAPES`.
"""

from __future__ import annotations

import argparse
import importlib
import json
import pkgutil
import re
import resource
import subprocess
import sys
import time
from collections.abc import Iterator

from tabulate import tabulate

from pytest_agentclinic.grading.judging.pipeline import GRADED_CHARS
from pytest_agentclinic.grading.judging.rules import grade_text

TRUTH = "psoriasis"
SIZES = (4096, 16384, GRADED_CHARS)
MEMORY = 4 << 30  # bytes a measuring child may take
NOISE = 0.01  # seconds: a ratio over a shorter time measures the clock's noise
_THOUGHT = ("Let me think about this step by step. The patient is a 45-year-old woman with "
            "itchy scaly plaques on the elbows and knees for 3 months; no fever. The "
            "differential includes eczema, tinea corporis and lichen planus, but the silvery "
            "scale and the nail pitting point to psoriasis rather than a fungal infection. ")
_JSON_ITEM = '{"name": "eczema", "likelihood": "low", "reason": "no atopy, no flexural rash"}, '

#: Each hostile shape: a name and the phrase repeated to the length (a leading and a
#: trailing part around the repeats where the shape needs them).
SHAPES: dict[str, tuple[str, str, str]] = {
    # found quadratic on main (see docs/grading.md, *Hostile replies*)
    "note without commas ('x incidental y')": ("", "x incidental y ", ""),
    "'incidental' repeated": ("", "incidental ", ""),
    "bracketed notes ('word (known)')": ("", "word (known) ", ""),
    "table bars on one line ('| x')": ("", "| x ", ""),
    "bars ('|')": ("", "|", ""),
    "colon before a bar (':|')": ("", ":|", ""),
    "labels before bars ('x: | y')": ("", "x: | y ", ""),
    "colon before an enumerator ('x: 1) ')": ("", "x: 1) ", ""),
    "colons and enumerators (':1)')": ("", ":1)\t", ""),
    "short forms ('acute pericarditis (AP)')": ("", "acute pericarditis (AP) ", ""),
    "label repeated, commas ('Final diagnosis: y,')": ("", "x Final diagnosis: y, ", ""),
    "label repeated, lines": ("", "Final diagnosis: psoriasis\n", ""),
    "DIAGNOSIS READY repeated": ("", "DIAGNOSIS READY: psoriasis\n", ""),
    # a label's text read again for its own label: a recursion past Python's limit at 4 KB
    "labels run together ('Dx: ')": ("", "Dx: ", ""),
    "final labels run together ('Final diagnosis: ')": ("", "Final diagnosis: ", ""),
    "run of spaces": ("Psoriasis", " ", "."),
    "run of newlines": ("Psoriasis", "\n", "."),
    "run of tabs": ("Psoriasis", "\t", "."),
    "run of blank lines with spaces": ("Psoriasis", " \n", "."),
    # what a runaway model writes
    "one line repeated": ("", "The most likely diagnosis is psoriasis.\n", ""),
    "chain of thought": ("", _THOUGHT, "\nFinal diagnosis: psoriasis"),
    "markdown table": ("| Diagnosis | Likelihood |\n|---|---|\n", "| Eczema | low |\n",
                       "\nFinal diagnosis: psoriasis"),
    "nested brackets": ("Psoriasis ", "(", ""),
    "brackets never closed ('( x')": ("", "( x ", ""),
    "long JSON": ('{"final_diagnosis": "psoriasis", "differential": [', _JSON_ITEM, "]}"),
    "bulleted list": ("Final diagnosis: psoriasis\n", "- eczema\n", ""),
    "numbered list": ("", "1. psoriasis\n", ""),
    "bold words": ("", "**psoriasis** ", ""),
    "headings": ("", "# Psoriasis\n", ""),
    "arrows ('x -> y')": ("", "x -> y ", ""),
    "plus signs ('x + y')": ("", "x + y ", ""),
    "question marks ('x? ')": ("", "psoriasis? ", ""),
    "percentages ('x (10%)')": ("", "eczema (10%) ", ""),
    "quotes": ("", '"psoriasis" ', ""),
    "one long word": ("", "a", ""),
    "names and commas ('psoriasis, eczema,')": ("", "psoriasis, eczema, ", ""),
    "alternatives ('x or y')": ("", "psoriasis or eczema or ", ""),
    "causes without commas ('x due to y')": ("", "x due to y ", ""),
    "companions without commas ('x with y')": ("", "x with y ", ""),
    "tags never closed ('<diagnosis>x')": ("", "<diagnosis>x ", ""),
    "tags never closed, one closing tag of another name": ("", "<diagnosis>", "</answer>"),
    "sentences ('x. ')": ("", "x. ", ""),
    "hedges ('possibly x')": ("", "possibly x ", ""),
    "negations ('not x')": ("", "not x ", ""),
    # notes joined by ";" in a bracket, each made a bracket of its own (round 5 of the
    # recorded verdicts): closed, and never closed
    "bracketed notes with ';' ('x (a; b)')": ("", "x (mild; chronic) ", ""),
    "semicolons in a bracket never closed ('(a; b')": ("", "(mild; chronic ", ""),
    "rank signs ('x >> y')": ("", "x >> y ", ""),
    "spaces under a differential heading": ("Bee sting. Differential: eczema", " ", " - y"),
    # red team round 18: a task list's unticked items, two names weighed and one chosen
    # (the latter costs on main what it costs here: the reader's hedges, not the new pattern)
    "task list items ('- [ ] x')": ("- [x] psoriasis\n", "- [ ] x\n", ""),
    "weighed and chosen ('x vs y, favour')": ("", "x vs y, favour ", ""),
    # red team round 19: "W was considered" in brackets, a bar before a confidence, a dash
    # before features, the marker in underscores, a JSON list at the top, a semicolon's reason
    "weighed in brackets ('(x was considered, but')": ("", "(x was considered, but ", ""),
    "bars before a confidence ('x | confidence')": ("", "x | confidence ", ""),
    "dashes before features ('x - features suggestive of')": (
        "", "x - features suggestive of ", ""),
    "markers in underscores ('_DIAGNOSIS READY:_')": ("", "_DIAGNOSIS READY:_ x ", ""),
    "a JSON list of objects at the top": ("[", '{"diagnosis": "x"}, ', '{"diagnosis": "y"}]'),
    "reasons after semicolons ('x; classic presentation')": (
        "", "x; classic presentation ", ""),
    # red team round 20: capitals with full stops, a likelihood word between names, a
    # bracket after capitals, capitals with a plural "s"
    "dotted capitals ('A.L.L. ')": ("", "A.L.L. ", ""),
    "dotted capitals run together ('A.B.')": ("", "A.B.", ""),
    "likelihood words ('x, probably y')": ("", "x, probably y ", ""),
    "capitals before a bracket ('GBM (x)')": ("", "GBM (glioblastoma) ", ""),
    "plural capitals ('AVMs ')": ("", "AVMs ", ""),
}

#: The shapes the tests grade at full length under a bound of CPU (~2.5 s together): one
#: at least for each pattern that was quadratic, the cheapest that shows it, and runaway
#: shapes.
GUARDED = ("'incidental' repeated", "bars ('|')", "colon before a bar (':|')",
           "table bars on one line ('| x')", "colons and enumerators (':1)')",
           "short forms ('acute pericarditis (AP)')", "run of spaces", "run of newlines",
           "run of tabs", "run of blank lines with spaces", "one long word", "nested brackets",
           "DIAGNOSIS READY repeated", "markdown table", "numbered list",
           "labels run together ('Dx: ')", "final labels run together ('Final diagnosis: ')",
           "tags never closed ('<diagnosis>x')",
           "tags never closed, one closing tag of another name",
           "bracketed notes with ';' ('x (a; b)')")

#: How a swept phrase is repeated: with filler words, without a break, after a comma, a
#: sentence's end and a line's; in brackets; alone.
TEMPLATES = ("x {} y ", "x {} y, ", "x {} y. ", "x {} y\n", "word ({}) ", "{} ")
#: Punctuation and markup swept beside the patterns' words.
MARKUP = ("|", "*", "**", "#", "-", "1.", "1)", "(", ")", "[", "]", "{", "}", "->", "+", ":",
          "?", "%", '"', "'", ",", ";", "/", ">", "<", "`", "```", "=", "DIAGNOSIS READY:",
          "Final diagnosis:")


def hostile(shape: tuple[str, str, str], length: int) -> str:
    """The shape's text of exactly ``length`` characters (its end kept)."""
    head, unit, tail = shape
    repeats = (length - len(head) - len(tail)) // len(unit) + 1
    body = (head + unit * repeats)[: length - len(tail)]
    return body + tail


def cpu(text: str) -> float:
    """Seconds of CPU to grade ``text`` (a fresh text each time: the reader caches)."""
    started = time.process_time()
    grade_text(text, [TRUTH])
    return time.process_time() - started


def vocabulary() -> list[str]:
    """The words and phrases the reader's compiled patterns look for, and :data:`MARKUP`."""
    packages = ["pytest_agentclinic.grading.reading", "pytest_agentclinic.grading.judging",
                "pytest_agentclinic.grading.terms"]
    modules = [importlib.import_module("pytest_agentclinic.core.text")]
    for package in packages:
        found = importlib.import_module(package)
        modules += [importlib.import_module(f"{package}.{m.name}")
                    for m in pkgutil.iter_modules(found.__path__)]
    phrases: set[str] = set()
    for module in modules:
        for value in vars(module).values():
            if isinstance(value, re.Pattern):
                phrases.update(_literals(value.pattern))
    return sorted(phrases) + list(MARKUP)


def _literals(pattern: str) -> Iterator[str]:
    """The runs of words in a pattern's text (escapes, classes and groups' syntax left out,
    ``\\s+`` read as a space)."""
    text = re.sub(r"\\[bBwWdDsSAZ][*+?]?", " ", pattern)
    text = re.sub(r"\[[^\]]*\]|\(\?(?:[:!=]|<[!=]|P<\w+>)", " ", text)
    for run in re.findall(r"[A-Za-z][A-Za-z' ]*[A-Za-z]", text):
        words = " ".join(run.split()).lower()
        if len(words) > 1:
            yield words


def measure(shape: tuple[str, str, str], sizes: tuple[int, ...]) -> list[float]:
    """CPU seconds at each size."""
    return [cpu(hostile(shape, size)) for size in sizes]


def _capped(name: str, cap: int) -> list[float | None]:
    """The shape's CPU at 4, 16 and 64 KB, graded in a child process limited to ``cap``
    seconds of CPU: None for the sizes it did not reach (a quadratic reader on main takes
    minutes)."""
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_CPU, (cap, cap))
        # (a word of 64,000 letters made main build its one-edit neighbours: ~200 GB)
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))

    done = subprocess.run([sys.executable, __file__, "--one", name], capture_output=True,
                          text=True, preexec_fn=limit, check=False)
    found = [float(v) for v in done.stdout.split()]
    return [*found, *[None] * (len(SIZES) - len(found))]


def one(name: str) -> int:
    """Print the shape's CPU at each size as soon as it is known."""
    grade_text(TRUTH, [TRUTH])  # load the terminology first
    for size in SIZES:
        print(f"{cpu(hostile(SHAPES[name], size)):.3f}", flush=True)
    return 0


def table(cap: int) -> int:
    """Print every shape's CPU at 4, 16 and 64 KB; 1 when one misses the goal."""
    rows, missed = [], 0
    for name in SHAPES:
        small, medium, large = _capped(name, cap)
        ratio = None if small is None or medium is None else medium / max(small, NOISE)
        over = large is None or large > 0.3 or ratio is None or ratio > 6
        missed += over
        rows.append([name, *(f"> {cap}" if v is None else f"{v:.3f}"
                             for v in (small, medium, large)),
                     "-" if ratio is None else f"{ratio:.1f}", "over" if over else ""])
        print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    print(tabulate(rows, headers=["shape", "4 KB s", "16 KB s", "64 KB s", "16/4", "goal"],
                   tablefmt="github"))
    print(f"\n{len(rows)} shapes; over the goal (0.3 s at 64 KB or 16/4 over 6): {missed}")
    return 1 if missed else 0


def sweep() -> int:
    """Grade each vocabulary shape at 4 and 16 KB; print those over the ratio or 0.1 s."""
    grade_text(TRUTH, [TRUTH])
    words, found = vocabulary(), 0
    print(f"{len(words)} words and marks x {len(TEMPLATES)} templates", file=sys.stderr)
    for word in words:
        for template in TEMPLATES:
            shape = ("", template.format(word), "")
            small, medium = measure(shape, (4096, 16384))
            ratio = medium / max(small, NOISE)
            if ratio > 6 or medium > 0.1:
                found += 1
                print(f"{template.format(word)!r}\t{small:.3f}\t{medium:.3f}\t{ratio:.1f}",
                      flush=True)
    print(f"\n{found} shapes over 6x or 0.1 s at 16 KB")
    return 0


def main() -> int:
    """The table, or the sweep."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sweep", action="store_true",
                        help="sweep the words of the reader's patterns (~1 h)")
    parser.add_argument("--cap", type=int, default=60,
                        help="seconds of CPU a shape may take at all sizes together")
    parser.add_argument("--one", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        return one(args.one)
    return sweep() if args.sweep else table(args.cap)


if __name__ == "__main__":
    sys.exit(main())
