"""CRAFT-MD agents: the clinical LLM, the vignette patient-AI and the summarizer.

Each has an offline deterministic version (documented in the README) and an LLM version.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..core.case import Case
from ..core.datafiles import data_file, read_pairs
from ..core.roles import Reply, TurnView
from ..core.text import content_words, sentences
from . import prompts
from .llm_agents import _ModelAgent
from .offline_doctor import HISTORY, choose

LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"

#: Medical words the offline patient says in everyday language (a small glossary,
#: ``data/patient_glossary.tsv``).
GLOSSARY = read_pairs(data_file(__package__, "patient_glossary.tsv"))
_INTRO = re.compile(r"^an?\s+\d+[- ](?:year|month|week|day)[- ]old\s+\w+(?:\s+\w+)?\s+"
                    r"(?:presents|presented|comes|came|is brought|was brought|visits|visited)"
                    r"(?:\s+to\s+[^,]+?)?\s+(?:with|because of|for)\s+(?:complaints of\s+)?",
                    re.I)
_THIRD = ((r"\b(?:the patient|he|she) (?:denies|denied)\b", "I haven't had"),
          (r"\b(?:the patient|he|she) (?:reports|reported|complains of|complained of)\b", "I have"),
          (r"\bthe patient\b", "I"), (r"\b(?:he|she)\b", "I"), (r"\b(?:his|her)\b", "my"),
          (r"\bhim\b", "me"), (r"\bdenie[sd]\b", "haven't had"))
# What a patient cannot know: examination findings and test results.
_CLINICAL = re.compile(r"examination|laboratory|labs?\b|reveals?|shows?\b|biopsy|mm ?hg|/mm3|"
                       r"temperature is|pulse is|blood pressure|respirations|\bx-ray|\bct\b|"
                       r"\bmri\b|serum|smear|culture|ultrasound|ecg|ekg|\bnoted\b|\bfound\b|"
                       r"physical exam|vital signs|auscultation|palpation", re.I)
# Question topics -> words that mark the vignette sentences answering them.
_TOPICS = (
    (r"bring|start|when|how long|problem|happen", r"\bago\b|since|start|began|for \d|\bdays?\b|"
     r"weeks?|months?|years?|sudden|gradual"),
    (r"other symptom|anything else|noticed", r"pain|fever|rash|cough|swelling|itch|nausea|"
     r"vomit|fatigue|tired|weak|bleed|headache|dizz|short|numb|lesion|spot|lump"),
    (r"medical|condition|illness|history", r"history|diagnosed|has had|previous|past|known|"
     r"underwent|surgery"),
    (r"medication|taking|drug", r"taking|takes|medication|\bmg\b|treated with|started on|"
     r"prescribed|contracept|inhaler|insulin"),
    (r"smoke|alcohol|drink|work|living|sexual|travel", r"smok|alcohol|drinks|beer|wine|works?\b|"
     r"occupation|sexual|partner|travel|lives|student|married"),
    (r"family", r"mother|father|sister|brother|family|parent|son\b|daughter"),
    (r"fever|weight|anywhere else", r"fever|weight|chills|sweats|appetite|fatigue"),
)


def lay(text: str) -> str:
    """Replace glossary words by everyday words (case-insensitive, whole words)."""
    for word, plain in GLOSSARY.items():
        text = re.sub(rf"\b{word}\b", plain, text, flags=re.I)
    return text


def first_person(text: str) -> str:
    """Turn a vignette sentence about the patient into something the patient would say."""
    for pattern, repl in _THIRD:
        text = re.sub(pattern, repl, text, flags=re.I)
    return text


def options_text(options: Sequence[str]) -> str:
    """``A) first`` ... lines for an MCQ prompt."""
    return "\n".join(f"{LETTERS[i]}) {o}" for i, o in enumerate(options))


def _relevance(question: str, sentence: str) -> int:
    """Shared content words, plus two points per question topic the sentence speaks to."""
    score = len(content_words(question) & content_words(sentence))
    for asks, marks in _TOPICS:
        if re.search(asks, question, re.I) and re.search(marks, sentence, re.I):
            score += 2
    return score


def _hides(case: Case, text: str) -> bool:
    return any(d.lower() in text.lower() for d in case.accepted_diagnoses)


class OfflineVignettePatient:
    """Answers with the vignette sentences that share most words with the question, in
    simpler words where the glossary allows; never a sentence naming the diagnosis, and
    "I don't know" when no sentence addresses the question. It invents nothing."""

    model = "offline"
    prompt_version = "offline-vignette-patient-1"

    async def respond(self, view: TurnView) -> Reply:
        """The opening statement (no question yet) or the answer to ``view.incoming``."""
        facts = [s for s in sentences(view.case.vignette)
                 if not _hides(view.case, s) and not _CLINICAL.search(s)]
        if facts:
            facts[0] = self.opening(facts)  # "A 40-year-old man presents with" -> "I came in"
        if not view.incoming:
            return Reply(lay(first_person(facts[0] if facts else "I don't feel well.")))
        told = {u.text for u in view.history if u.role == "patient"}
        scored = sorted(((_relevance(view.incoming, s), i, s) for i, s in enumerate(facts)),
                        key=lambda t: (-t[0], t[1]))
        best = [s for score, _, s in scored if score > 0][:2]
        answer = lay(first_person(" ".join(best))) if best else ""
        return Reply(answer if answer and answer not in told else "I don't know.")


    @staticmethod
    def opening(facts: Sequence[str]) -> str:
        """The first vignette sentence as the patient's reason for coming (``facts`` is not
        empty)."""
        complaint = _INTRO.sub("", facts[0])
        if complaint == facts[0]:  # not the usual "A 40-year-old man presents with ..."
            return first_person(complaint)
        return f"I came in because of {complaint[0].lower()}{complaint[1:]}"


class OfflineSummarizer:
    """Joins the patient's statements into a third-person paragraph, adding nothing."""

    model = "offline"
    prompt_version = "offline-summarizer-1"

    async def summarize(self, case: Case, statements: Sequence[str], sample: int) -> Reply:
        """A vignette written from ``statements``."""
        text = " ".join(statements)
        for pattern, repl in ((r"\bI am\b", "the patient is"), (r"\bI'm\b", "the patient is"),
                              (r"\bI\b", "the patient"), (r"\bmy\b", "their"),
                              (r"\bme\b", "them")):
            text = re.sub(pattern, repl, text)
        return Reply(f"The patient reports: {text}")


class OfflineClinician:
    """The scripted clinical baseline: the history checklist, then "Final Diagnosis"; its
    final answers pick the option (MCQ) or the candidate (free response) best supported by
    the context it was given (IDF-weighted word coverage, as the AgentClinic baseline)."""

    model = "offline"
    prompt_version = "offline-clinician-1"

    def __init__(self, candidates: Sequence[str] = ()) -> None:
        self.candidates = tuple(candidates)

    async def respond(self, view: TurnView) -> Reply:
        """The next checklist question, or the conclusion."""
        asked = sum(u.role == "doctor" for u in view.history)
        if asked < len(HISTORY) and view.turns_left > 1:
            return Reply(HISTORY[asked])
        heard = " ".join(u.text for u in view.history if u.role == "patient")
        return Reply(f"Final Diagnosis: {choose(self.candidates or ['unknown'], heard)}")

    async def final(self, case: Case, context: str, options: Sequence[str] | None,
                    sample: int) -> Reply:
        """The answer to the final question, given ``context``."""
        if options:
            pick = choose(options, context)
            return Reply(f"Final Diagnosis: {LETTERS[list(options).index(pick)]}) {pick}")
        return Reply(f"Final Diagnosis: {choose(self.candidates or ['unknown'], context)}")


class LLMClinician(_ModelAgent):
    """The clinical LLM under test."""

    role = "doctor"
    templates = ("craftmd_doctor", "craftmd_final", "craftmd_frq", "craftmd_mcq")

    def _system_text(self, case: Case) -> str:
        return self._system(prompts.load("craftmd_doctor").render(specialty=case.specialty))

    async def respond(self, view: TurnView) -> Reply:
        """The next question or the conclusion, from the conversation so far."""
        out = [{"role": "system", "content": self._system_text(view.case)}]
        for u in view.history:
            role = "assistant" if u.role == "doctor" else "user"
            out.append({"role": role, "content": u.text})
        return await self._call(view, out)

    async def final(self, case: Case, context: str, options: Sequence[str] | None,
                    sample: int) -> Reply:
        """The answer to the final question (MCQ with ``options``, else free response)."""
        instruction = (prompts.load("craftmd_mcq").render(options=options_text(options))
                       if options else prompts.load("craftmd_frq").text)
        body = prompts.load("craftmd_final").render(context=context, instruction=instruction)
        view = TurnView(case, (), body, 0, 0, sample)
        return await self._call(view, [{"role": "system", "content": self._system_text(case)},
                                       {"role": "user", "content": body}])


class LLMVignettePatient(_ModelAgent):
    """The patient-AI: answers from the vignette in lay language."""

    role = "patient"
    templates = ("craftmd_patient", "craftmd_opening")

    async def respond(self, view: TurnView) -> Reply:
        """The opening statement or the answer to the doctor's latest question."""
        system = prompts.load("craftmd_patient").render(vignette=view.case.vignette)
        out = [{"role": "system", "content": self._system(system)},
               {"role": "user", "content": prompts.load("craftmd_opening").text}]
        for u in view.history:
            out.append({"role": "assistant" if u.role == "patient" else "user",
                        "content": u.text})
        return await self._call(view, out)


class LLMSummarizer(_ModelAgent):
    """Rewrites the patient's statements as a third-person vignette."""

    role = "summarizer"
    templates = ("craftmd_summarizer",)

    async def summarize(self, case: Case, statements: Sequence[str], sample: int) -> Reply:
        """A vignette written from ``statements``."""
        body = prompts.load("craftmd_summarizer").render(statements="\n".join(statements))
        return await self._call(TurnView(case, (), body, 0, 0, sample),
                                [{"role": "user", "content": body}])
