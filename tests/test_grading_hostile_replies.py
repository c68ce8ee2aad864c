"""A hostile or runaway reply cannot stall a run through the grader: every hostile shape of
``benchmarks/bench_hostile_replies.py`` is graded at ``GRADED_CHARS`` (65,536) characters,
the most an answer is graded on, in a child process limited in CPU, so that a reading
quadratic in the length of a clause or a line fails here instead of hanging."""

from __future__ import annotations

import json
import resource
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.bench_hostile_replies import GUARDED, SHAPES

ROOT = Path(__file__).resolve().parents[1]
#: Seconds of CPU for all shapes together: ~100x what they take (~0.3 s once the terminology
#: is loaded); on a reader quadratic in any of them, one alone takes minutes.
CPU_BOUND = 30
MEMORY = 4 << 30

_CHILD = """
import json, sys
from benchmarks.bench_hostile_replies import SHAPES, TRUTH, hostile
from pytest_agentclinic.grading.judging.pipeline import GRADED_CHARS
from pytest_agentclinic.grading.judging.rules import grade_text
for name in sys.argv[1:]:
    extraction, decision = grade_text(hostile(SHAPES[name], GRADED_CHARS), [TRUTH])
    print(json.dumps([name, extraction.category, decision.correct]), flush=True)
"""


#: The shapes that name the truth (alone or among others): these may be read as it.
NAMES_TRUTH = frozenset(name for name, (head, unit, tail) in SHAPES.items()
                        if "psoriasis" in (head + unit + tail).lower())


def _limit() -> None:
    resource.setrlimit(resource.RLIMIT_CPU, (CPU_BOUND, CPU_BOUND))
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))


def test_every_hostile_shape_is_graded_at_full_length_within_a_cpu_bound() -> None:
    done = subprocess.run([sys.executable, "-c", _CHILD, *GUARDED], cwd=ROOT,
                          capture_output=True, text=True, preexec_fn=_limit, check=False,
                          timeout=10 * CPU_BOUND)
    graded = [json.loads(line) for line in done.stdout.splitlines()]
    reached = [name for name, _category, _correct in graded]
    stalled = next((name for name in GUARDED if name not in reached), None)
    assert done.returncode == 0, (f"grading {stalled!r} at 65,536 characters went over "
                                  f"{CPU_BOUND} s of CPU (or failed): {done.stderr[-2000:]}")
    # a hostile reply is read as several names, none or one: never an error, and never as
    # the truth where it does not name it
    assert reached == list(GUARDED)
    for name, category, correct in graded:
        assert category in ("multiple", "none", "single"), (name, category)
        assert not correct or name in NAMES_TRUTH, (name, category)


def test_a_label_whose_text_opens_with_labels_is_read_once_each() -> None:
    # "Final Diagnosis: Answer: X" declares X through "Answer:": read once, not once a label
    # (the count a multiple answer's reason gives is of the names declared)
    from pytest_agentclinic.grading.reading.labels import declared

    assert declared("Final Diagnosis: Answer: psoriasis") == ["psoriasis"]
    assert declared("Working diagnosis: eczema\nFinal Diagnosis: Answer: psoriasis") == [
        "psoriasis"]


def test_labels_run_together_are_read_without_running_past_the_recursion_limit() -> None:
    # each label's text read again through every later label was exponential, and past
    # Python's recursion limit at ~1,000 labels (4 KB of "Dx: ")
    from pytest_agentclinic.grading.judging.rules import grade_text

    for unit in ("Dx: ", "Final diagnosis: ", "Diagnosis: Answer: "):
        extraction, decision = grade_text(unit * 1500, ["psoriasis"])
        assert extraction.category in ("multiple", "none", "single")
        assert not decision.correct


def _in_child(code: str) -> str:
    """What ``code`` prints, run in a child process under the CPU bound (its error output
    in the failure's message when it went over)."""
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, preexec_fn=_limit, check=False, timeout=10 * CPU_BOUND)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.strip()


_OPEN_TAGS = """
import sys
from pytest_agentclinic.grading.reading.markers import unwrap
unwrap("<diagnosis>" * (1 << 17) + "</answer>")  # 1.4 MB, past what a grade reads
print("read")
"""


def test_open_tags_and_a_closing_tag_of_another_name_are_read_in_linear_time() -> None:
    # a closing tag made each open tag's lazy body scan to the text's end: 1.8 s of CPU at
    # 64 KB, minutes at this length; paired by position, well under a second
    assert _in_child(_OPEN_TAGS) == "read"


_TAGS = ("<diagnosis>", "</diagnosis>", "<DIAGNOSIS>", "</Diagnosis>", "<answer>", "</answer>",
         "<final_diagnosis>", "</final_diagnosis>", "<final-dx>", "</FINAL-DX>", "</dx>",
         "</d\u0130agnosis>", "<d\u0131agnosis>", "</diagno\u017fis>", " psoriasis ", "\n",
         "<", ">", "/", "_")


def test_tags_pair_as_the_lazy_pattern_pairs_them() -> None:
    # the pairing by position is the reading the pattern "<(name)>(.*?)</\1>" gave, letter
    # cases as its back-reference compares them ("\u0130" is "i", "\u017f" no "s")
    import random
    import re

    from pytest_agentclinic.grading.reading.markers import _untag

    lazy = re.compile(r"<((?:[a-z]+[_-])*(?:diagnosis|dx|answer|impression|assessment|"
                      r"conclusion))>(.*?)</\1>", re.I | re.S)
    draw = random.Random(31)
    for _ in range(3000):
        text = "".join(draw.choice(_TAGS) for _ in range(draw.randint(1, 12)))
        expected = lazy.subn(lambda m: f"\n{m.group(1).replace('_', ' ')}: "
                             f"{m.group(2).strip()}\n", text)
        assert _untag(text) == expected, text


_GLOSS_GAP = """
from pytest_agentclinic.grading.reading.companions import glosses_main
# a long run of spaces between the main name and a bracket, then a word: no gloss
print(glosses_main("x" + " " * 50000 + "q y", "x", "y"))
"""


def test_a_long_gap_before_a_gloss_is_read_in_linear_time() -> None:
    # the gap's two runs of spaces tried every split of a long one before they failed
    # (1.4 s of CPU at 8,000 spaces, past the bound at 50,000)
    assert _in_child(_GLOSS_GAP) == "False"


_WHOLE_BRACKET = """
from pytest_agentclinic.grading.reading.extract import _unbracketed
# a bracket, a long run of spaces, then a word: no bracket around the whole answer
print(_unbracketed("(psoriasis)" + " " * 200000 + "x") == "(psoriasis)" + " " * 200000 + "x")
"""


def test_a_bracket_then_a_long_run_of_spaces_is_read_in_linear_time() -> None:
    # two runs of spaces side by side after the bracket tried every split of a long one
    # before the match failed (0.73 s of CPU at 16,000 spaces, minutes at 200,000)
    assert _in_child(_WHOLE_BRACKET) == "True"
