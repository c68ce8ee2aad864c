"""Names a source states are one disease, where the terminology's sources do not (stage 2,
relate). Two tables, each of its own source, word for word; no other pair is added here
(docs/grading.md, "The recorded verdicts, round 3").

* **The paper's grader prompt.** CRAFT-MD's step 2 (``../shared/papers/craft-md.txt``,
  "compare extracted diagnosis to correct answer") teaches its grader by examples, and the
  dermatologists were given the same pairs ("Is the clinical LLM's diagnosis equivalent to
  the correct vignette answer?"): Example 3, "toe nail fungus" and onychomycosis, and
  Example 4, "wart" and verruca vulgaris, "They are synonymous, so return Yes". MeSH's
  "Warts" and the Disease Ontology's "common wart" sit in different trees, and "toe nail
  fungus" is a lay name no source lists, so both were read as different diseases.
* **DSM-5's new names.** DSM-5 (American Psychiatric Association, 2013; its "Highlights of
  Changes from DSM-IV-TR to DSM-5") renamed disorders of DSM-IV-TR, and writes some with the
  old name beside the new ("Conversion Disorder (Functional Neurological Symptom
  Disorder)", "Childhood-Onset Fluency Disorder (Stuttering)"). Clinicians and models use
  both; the paper's step 2 asks for "alternative medical terminologies for the
  conditions". Only a DSM-IV-TR disorder renamed whole is listed: not one DSM-5 split
  between two (hypochondriasis: somatic symptom disorder or illness anxiety disorder), nor
  one it merged with others into a new disorder (somatization disorder, pain disorder and
  undifferentiated somatoform disorder into somatic symptom disorder; Asperger's disorder,
  substance dependence), which would make the new name a synonym of each, nor a new
  diagnosis with no DSM-IV-TR name (mild neurocognitive disorder).
"""

from __future__ import annotations

from collections.abc import Callable

from ..terminology import Key, compact, key
from .glossaries import stated_pair

#: (source, name, name): the pairs each source states are one disease.
_STATED = (
    ("the paper's grader prompt, example 3", "toe nail fungus", "onychomycosis"),
    ("the paper's grader prompt, example 4", "wart", "verruca vulgaris"),
    ("DSM-5's name of DSM-IV-TR's", "functional neurological symptom disorder",
     "conversion disorder"),
    ("DSM-5's name of DSM-IV-TR's", "depersonalization-derealization disorder",
     "depersonalization disorder"),
    ("DSM-5's name of DSM-IV-TR's", "major neurocognitive disorder", "dementia"),
    ("DSM-5's name of DSM-IV-TR's", "insomnia disorder", "primary insomnia"),
    ("DSM-5's name of DSM-IV-TR's", "hypersomnolence disorder", "primary hypersomnia"),
    ("DSM-5's name of DSM-IV-TR's", "childhood-onset fluency disorder", "stuttering"),
)

#: The pairs as :func:`.terminology.compact` writes them ("toe nail fungus", "toenail
#: fungus" and "toe-nail fungus" are one name; "warts" is "wart").
_PAIRS: dict[frozenset[str], str] = {
    frozenset((compact(a), compact(b))): f"{source}: {a!r} and {b!r} name one disease"
    for source, a, b in _STATED
}


def stated_synonym(given: str, truth: str,
                   named_apart: Callable[[Key, Key], bool] | None = None) -> str | None:
    """Why a source states ``given`` and ``truth`` are one disease, or None. With
    ``named_apart`` (whether the sources give a name, but not as a synonym of the other), the
    project's glossaries state their pairs too (:func:`.glossaries.stated_pair`)."""
    stated = _PAIRS.get(frozenset((compact(given), compact(truth))))
    if stated is None and named_apart is not None:
        return stated_pair(key(given), key(truth), named_apart)
    return stated
