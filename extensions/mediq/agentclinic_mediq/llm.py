"""The model-backed patient and expert, prompted after upstream MediQ's (src/prompts.py,
src/patient.py FactSelectPatient, src/expert_functions.py), in this project's words.

Every call goes through :func:`pytest_agentclinic.api.ask_model`: the run's cache, retries,
``--agent-api-base`` and usage counts apply. The patient's reply is kept only where it
recites the case's facts: a line that is no fact is dropped, and a reply with none left is
"cannot answer", so a model patient reveals nothing the case does not hold.
"""

from __future__ import annotations

import re
from typing import Any

from pytest_agentclinic import api

from .offline import fact_text, likert, revealed
from .state import BASELINES, UNKNOWN, ExpertState, Step

VERSION = "mediq-1"
_SYSTEM = ("You are a medical doctor reasoning through a real clinical case. Use your "
           "knowledge of basic and clinical science and standard practice, and respond "
           "exactly as the task asks.")
_TEMPLATE = ("A patient comes into the clinic; what is known so far is below.\n\n"
             "PATIENT INFORMATION: {info}\nCONVERSATION LOG:\n{log}\nQUESTION: {question}\n"
             "OPTIONS: {options}\nYOUR TASK: {task}")
_CONSIDER = ("Consider the specialty of this case, the features a doctor needs to decide, "
             "and whether the conversation above gives all of them. ")
_REASON = "\nREASON: one sentence on why.\n"
TASKS = {
    "answer": "Assume you have enough information and give your best answer. Reply with "
              "the letter (A, B, C or D) and NOTHING ELSE.\nLETTER CHOICE:",
    "basic": "If you are confident to pick the right option, reply with its letter and "
             "NOTHING ELSE. Otherwise ask the patient ONE specific, short question that "
             "has not been asked yet, and NOTHING ELSE.",
    "basic-rg": "If you are confident to pick the right option, reply as\nREASON: one "
                "sentence on why.\nANSWER: the letter.\nOtherwise reply as\nREASON: one "
                "sentence on what is missing.\nQUESTION: ONE specific, short question.",
    "binary": _CONSIDER + "Are you confident to pick the right option from the "
              "conversation so far? Answer YES or NO and NOTHING ELSE.",
    "binary-rg": _CONSIDER + "Are you confident to pick the right option from the "
                 "conversation so far? Answer as" + _REASON + "DECISION: YES or NO.",
    "numerical": _CONSIDER + "How confident are you to pick the right option from the "
                 "conversation so far? Answer with a probability from 0.0 to 1.0 and "
                 "NOTHING ELSE.",
    "numerical-rg": _CONSIDER + "How confident are you to pick the right option from the "
                    "conversation so far? Answer as" + _REASON + "SCORE: a probability "
                    "from 0.0 to 1.0.",
    "scale": _CONSIDER + "How confident are you to pick the right option? Choose one "
             "rating: Very Confident, Somewhat Confident, Neither Confident or "
             "Unconfident, Somewhat Unconfident, Very Unconfident. Reply with the rating "
             "and NOTHING ELSE.",
    "scale-rg": _CONSIDER + "How confident are you to pick the right option? Choose one "
                "rating: Very Confident, Somewhat Confident, Neither Confident or "
                "Unconfident, Somewhat Unconfident, Very Unconfident. Answer as" + _REASON
                + "DECISION: the rating.",
    "yes_no": "Now, are you confident to pick the right option? Answer YES or NO and "
              "NOTHING ELSE.",
    "question": "Which missing feature matters most for the right decision? Ask about it "
                "in ONE specific, short question (history, examination, tests, treatments "
                "so far...) that the conversation has not asked. Answer as\n"
                "ATOMIC QUESTION: the question and NOTHING ELSE.",
}
TASKS["numcutoff"], TASKS["numcutoff-rg"] = TASKS["numerical"], TASKS["numerical-rg"]
_PATIENT = ("You are a truthful assistant who knows the patient's facts and answers a "
            "doctor's question about the patient from them.")
_PATIENT_TASK = ("List of facts:\n{facts}\n\nQuestion from the doctor: \"{question}\"\n\n"
                 "Recite, one a line and verbatim, the facts that answer the question, and "
                 "nothing else. If none does, say \"" + UNKNOWN + "\"")
_LIKERT = (("very unconfident", 1), ("somewhat unconfident", 2),
           ("neither confident", 3), ("somewhat confident", 4), ("very confident", 5))


def parse_letter(text: str, options: dict[str, str]) -> str | None:
    """The option a reply names: a lone letter, ``ANSWER: B``, or an option's text."""
    stripped = text.strip().rstrip(".")
    if stripped in options:
        return stripped
    for line in reversed(text.splitlines()):
        tagged = re.search(r"(?:ANSWER|LETTER CHOICE|CHOICE)\s*:\s*\(?([ABCD])\b", line, re.I)
        if tagged:
            return tagged.group(1).upper()
        for letter, option in options.items():
            if option.lower() in line.lower():
                return letter
        tokens = re.sub(r"[,.;:()?!'/&$]+", " ", line).split()
        found = [t for t in tokens if t in options]
        if found:
            return found[0]
    return None


def parse_question(text: str) -> str | None:
    """The last line holding a question, without its label."""
    lines = [line.split(":")[-1].strip().strip("\"'") for line in text.splitlines()
             if "?" in line]
    return lines[-1] if lines else None


def parse_yes(text: str) -> bool:
    """YES (confident) unless the reply says no or neither."""
    said = text.lower().split("decision:")[-1]
    return "yes" in said and "no" not in re.findall(r"[a-z]+", said)


def parse_score(text: str) -> float:
    """The last number of a reply (0 when there is none: not confident)."""
    found = re.findall(r"\d*\.\d+|\d+", text.split("SCORE:")[-1])
    return float(found[-1]) if found else 0.0


def parse_likert(text: str) -> int:
    """A Likert rating 1-5 (0 when there is none)."""
    said = text.lower()
    return next((score for words, score in reversed(_LIKERT) if words in said), 0)


class LLMPatient:
    """Recites the facts that answer the question (upstream's fact-select patient)."""

    def __init__(self, model: str, ctx: api.PlayContext) -> None:
        self.model, self.ctx, self.prompt_version = model, ctx, VERSION

    async def respond(self, view: api.TurnView) -> api.Reply:
        facts = [str(f) for f in view.case.metadata.get("facts", []) or []]  # type: ignore[union-attr]
        if not facts:
            return api.Reply(UNKNOWN)
        task = _PATIENT_TASK.format(facts="\n".join(facts), question=view.incoming)
        reply = await api.ask_model(
            self.ctx, role="patient", model=self.model,
            messages=[{"role": "system", "content": _PATIENT},
                      {"role": "user", "content": task}],
            case_id=view.case.id, sample=view.sample, prompt_version=self.prompt_version)
        kept = [fact_text(facts[i]) for i in revealed(reply.text, facts)]
        return api.Reply("\n".join(kept) if kept else UNKNOWN, reply.usage)


class LLMExpert:
    """The expert under test: the setting's abstention module, then a question or a letter."""

    def __init__(self, model: str, ctx: api.PlayContext, *, samples: int = 3,
                 prob_threshold: float = 0.8, scale_threshold: int = 4) -> None:
        self.model, self.ctx, self.prompt_version = model, ctx, VERSION
        self.samples, self.prob_threshold = samples, prob_threshold
        self.scale_threshold = scale_threshold

    async def _ask(self, state: ExpertState, messages: list[dict[str, Any]],
                   repeat: int = 0) -> api.Reply:
        return await api.ask_model(self.ctx, role="doctor", model=self.model,
                                   messages=messages, case_id=state.case.id,
                                   sample=state.sample * 100 + repeat,
                                   prompt_version=self.prompt_version)

    def _messages(self, state: ExpertState, task: str) -> list[dict[str, Any]]:
        log = "\n".join(f"Doctor question: {q}\nPatient response: {a}"
                        for q, a in state.dialogue) or "None"
        options = ", ".join(f"{k}: {v}" for k, v in state.options.items())
        prompt = _TEMPLATE.format(info=state.info or "None", log=log,
                                  question=state.case.question, options=options, task=task)
        return [{"role": "system", "content": _SYSTEM}, {"role": "user", "content": prompt}]

    async def step(self, state: ExpertState) -> Step:
        kind, rg, sc = _parts(state.setting)
        if state.must_answer or kind in BASELINES:
            return await self._answer(state, None, api.Usage())
        if kind == "fixed":  # upstream's fixed expert: ask until the budget runs out
            return await self._question(state, None, 1.0, api.Usage())
        task = TASKS[kind + ("-rg" if rg else "")]
        messages = self._messages(state, task)
        replies = [await self._ask(state, messages, i)
                   for i in range(self.samples if sc else 1)]
        usage = sum((r.usage for r in replies), api.Usage())
        if kind == "basic":
            return await self._basic(state, replies, usage)
        sure, conf, more = await self._decide(state, kind, messages, replies)
        usage += more
        if sure:
            return await self._answer(state, conf, usage)
        return await self._question(state, [*messages, {"role": "assistant",
                                                        "content": replies[0].text}],
                                    conf, usage)

    async def _decide(self, state: ExpertState, kind: str, messages: list[dict[str, Any]],
                      replies: list[api.Reply]) -> tuple[bool, float, api.Usage]:
        """Whether to answer, the confidence, and the usage of a follow-up call."""
        texts, none = [r.text for r in replies], api.Usage()
        if kind == "binary":  # majority of YES over the samples
            conf = sum(parse_yes(t) for t in texts) / len(texts)
            return conf > 0.5, conf, none
        if kind == "scale":  # the mean rating against the threshold
            rating = sum(parse_likert(t) for t in texts) / len(texts)
            return rating >= self.scale_threshold, rating / 5, none
        conf = sum(parse_score(t) for t in texts) / len(texts)
        if kind == "numcutoff":
            return conf >= self.prob_threshold, conf, none
        # numerical: the model states a score, then says itself whether to go on
        follow = [*messages, {"role": "assistant", "content": texts[0]},
                  {"role": "user", "content": TASKS["yes_no"]}]
        reply = await self._ask(state, follow)
        return parse_yes(reply.text), conf, reply.usage

    async def _basic(self, state: ExpertState, replies: list[api.Reply],
                     usage: api.Usage) -> Step:
        letters = [parse_letter(r.text, dict(state.options)) for r in replies
                   if "?" not in r.text]
        questions = [q for r in replies if "?" in r.text and (q := parse_question(r.text))]
        chosen = [x for x in letters if x]
        conf = len(chosen) / max(1, len(chosen) + len(questions))
        if len(chosen) > len(questions):
            letter = max(sorted(set(chosen)), key=chosen.count)
            return Step("choice", letter, letter, conf, replies[0].text, usage)
        if questions:
            return Step("question", questions[0], None, conf, replies[0].text, usage)
        return await self._answer(state, conf, usage)  # neither: ask for the letter

    async def _question(self, state: ExpertState, messages: list[dict[str, Any]] | None,
                        conf: float | None, usage: api.Usage) -> Step:
        """Upstream's question generator, continuing the abstention chat when there is one."""
        messages = (self._messages(state, TASKS["question"]) if messages is None
                    else [*messages, {"role": "user", "content": TASKS["question"]}])
        reply = await self._ask(state, messages)
        question = parse_question(reply.text) or reply.text.split(":")[-1].strip()
        return Step("question", question, None, conf, reply.text, usage + reply.usage)

    async def _answer(self, state: ExpertState, conf: float | None, usage: api.Usage) -> Step:
        reply = await self._ask(state, self._messages(state, TASKS["answer"]))
        letter = parse_letter(reply.text, dict(state.options))
        return Step("choice", letter or "", letter, conf, reply.text, usage + reply.usage)


def _parts(setting: str) -> tuple[str, bool, bool]:
    """``scale-rg-sc`` -> (``scale``, rationale generation, self-consistency)."""
    kind, *flags = setting.split("-")
    return kind, "rg" in flags, "sc" in flags


__all__ = ["LLMExpert", "LLMPatient", "likert", "parse_letter", "parse_likert",
           "parse_question", "parse_score", "parse_yes"]
