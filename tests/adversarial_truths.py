"""The larger sets of truths the adversarial shapes are filled with
(``benchmarks/bench_adversarial.py --truths``): CRAFT-MD's, AgentClinic's and MediQ's
condition truths, read at run time from ``../shared`` (never copied into the checkout), in
two stable halves.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib.util import find_spec
from pathlib import Path

from adversarial import ROOT, Pool, digest, truth_key, words

from pytest_agentclinic.cases.loaders import load_case_file
from pytest_agentclinic.core.case import Case
from pytest_agentclinic.grading.judging.rules import conditions_asked
from pytest_agentclinic.grading.terms.concepts import default_terminology
from pytest_agentclinic.grading.terms.readings import names_a_disease

# --- a larger set of truths, read at run time ----------------------------------------------

#: The upstream data beside the checkout (never copied into it).
SHARED = ROOT.parent / "shared" / "datasets"
#: The truth sets :func:`held_out_truths` reads: name -> files under :data:`SHARED`.
TRUTH_SOURCES: dict[str, tuple[str, ...]] = {
    # CRAFT-MD's 2,004 vignettes (MedQA and dermatology), each with its four choices
    "craftmd": ("craftmd/usmle_and_derm_dataset.csv",),
    # AgentClinic's MedQA OSCE cases (no choices) and NEJM image cases (with choices)
    "agentclinic": ("agentclinic/agentclinic_medqa.jsonl",
                    "agentclinic/agentclinic_nejm.jsonl",
                    "agentclinic/agentclinic_nejm_extended.jsonl"),
    # MediQ's MedQA questions and dermatology cases (read through its extension), less the
    # truths of the two sets above: the third set, that no rule was studied on
    "mediq": ("mediq/all_dev_good.jsonl", "mediq/all_craft_md.jsonl"),
}
#: The sets whose truths a source leaves out ("repeated elsewhere"), so that it is new.
_NEW_AGAINST = {"mediq": ("craftmd", "agentclinic")}


@dataclass(frozen=True)
class Truths:
    """A pool of distinct truths read from a dataset, split in two halves by a stable hash
    of each truth: study failures on half A, report both (a fix that helps A only is a fit)."""

    source: str
    pool: Pool
    #: Cases read, and those left out: a truth seen before, a truth that is no condition
    #: (a question that asks for a next step, a test, a mechanism; a truth that names a drug
    #: or a test), a truth garbled in the data.
    read: int
    duplicates: int
    not_conditions: int
    garbled: int
    #: Truths left out as already in another set (:data:`_NEW_AGAINST`).
    elsewhere: int = 0

    def half(self, case: Case) -> str:
        """``A`` or ``B``: the half ``case``'s truth falls in."""
        return half_of(case.diagnosis)


def half_of(name: str) -> str:
    """``A`` or ``B`` by a stable hash of the truth: the same on every machine and run."""
    return "A" if digest(name)[0] % 2 == 0 else "B"


def held_out_truths(source: str, shared: Path = SHARED) -> Truths | str:
    """The distinct condition truths of ``source`` (:data:`TRUTH_SOURCES`) as a pool in a
    stable pseudo-random order (a hash of each truth), each case with its choices where the
    data has them; or, when a file is absent, the one-line reason why not."""
    others = _NEW_AGAINST.get(source, ())
    paths = [shared / name for name in TRUTH_SOURCES[source]]
    missing = [str(p) for p in paths if not p.is_file()] + [
        str(shared / n) for o in others for n in TRUTH_SOURCES[o] if not (shared / n).is_file()]
    if missing:
        return f"{source} truths: {', '.join(missing)} not found (../shared is absent)"
    if source == "mediq" and find_spec("agentclinic_mediq") is None:
        return "mediq truths: the MediQ extension is not installed (pip install extensions/mediq)"
    before = {_loose(c.diagnosis) for o in others for n in TRUTH_SOURCES[o]
              for _line, c in load_case_file(shared / n).cases}
    condition = _mediq_condition if source == "mediq" else _diagnosis_condition
    seen: set[str] = set()
    kept: list[Case] = []
    read = duplicates = not_conditions = garbled = elsewhere = 0
    for path in paths:
        for _line, case in load_case_file(path).cases:
            read += 1
            case = _cleaned(case)
            truth = truth_key(case.diagnosis)
            if truth in seen:
                duplicates += 1
            elif re.search(r"[\n\"]", case.diagnosis) or not truth:
                garbled += 1
            elif not condition(case):
                not_conditions += 1
            elif _loose(case.diagnosis) in before:
                seen.add(truth)
                elsewhere += 1
            else:
                seen.add(truth)
                kept.append(case)
    kept.sort(key=lambda c: digest(c.diagnosis))
    return Truths(source, Pool(tuple(kept)), read, duplicates, not_conditions, garbled,
                  elsewhere)


def _loose(name: str) -> str:
    """:func:`truth_key` without a possessive: a truth looked up among another set's."""
    return " ".join(words(re.sub(r"['\u2019](?:s\b)?", "", name)))


#: A question that asks for the diagnosis ("Which of the following is the most likely
#: diagnosis?"), not for a next step, a test that confirms it or a mechanism.
_DIAGNOSIS_ASKED = re.compile(r"\b(?:likely|probable)\s+(?:underlying\s+|clinical\s+)?"
                              r"diagnos[ie]s\b", re.I)


def _asks_diagnosis(case: Case) -> bool:
    """Whether ``case`` asks for a diagnosis: its question says so, or it has none (the
    dermatology vignettes and AgentClinic's OSCE cases ask to diagnose)."""
    return not case.question or _DIAGNOSIS_ASKED.search(case.question) is not None


def _diagnosis_condition(case: Case) -> bool:
    """CRAFT-MD's and AgentClinic's filter: a diagnosis asked for, a condition its answer."""
    return _asks_diagnosis(case) and conditions_asked(case.diagnosis, case.choices)


#: A MediQ question that asks for something the terminology may file under a disease but
#: that is none: an organism ("Treponema pallidum", filed as syphilis), an organ or a site
#: ("Spleen", as spleen disease), a gene, a mechanism, a mode of inheritance, a drug, a test.
_ASKS_NO_DIAGNOSIS = re.compile(
    r"organism|pathogen|\bagent|microb|bacteri|\bvir(?:us|al)|\borgans?\b|\bnerves?\b|arter"
    r"|vessel|structure|locat|\bsites?\b|\bparts?\b|segment|\bgenes?\b|chromosom|enzyme|karyotype"
    r"|mechanism|pathogenesis|pathophysiolog|\bcells?\b|inheritance|drug|medication|hormone"
    r"|receptor|\blab|\btests?\b", re.I)


def _mediq_condition(case: Case) -> bool:
    """MediQ's filter (its diagnosis questions are nearly all CRAFT-MD's too): a diagnosis
    asked for, or a condition under another name ("the most likely cause of this patient's
    symptoms") the terminology reads as a disease (a known disease concept, no symptom), if
    nothing :data:`_ASKS_NO_DIAGNOSIS` names is asked; answer and choices conditions."""
    if not conditions_asked(case.diagnosis, case.choices):
        return False
    if _asks_diagnosis(case):
        return True
    terms = default_terminology()
    return (terms.known(case.diagnosis) and names_a_disease(case.diagnosis, terms)
            and not terms.symptom(case.diagnosis)
            and not _ASKS_NO_DIAGNOSIS.search(case.question))


def _cleaned(case: Case) -> Case:
    """``case`` without the stray quote a few rows of the CRAFT-MD table end their answer
    with ("Osteosarcoma\\n\""), in the truth and in the choice that is the truth."""
    truth = case.diagnosis.rstrip('"').strip()
    if truth == case.diagnosis:
        return case
    choices = [truth if c == case.diagnosis else c for c in case.choices]
    return case.model_copy(update={"diagnosis": truth, "choices": choices})
