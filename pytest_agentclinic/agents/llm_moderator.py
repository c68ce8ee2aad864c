"""The moderator model: asked only what the grading rules cannot decide, read strictly.

It sees the extracted diagnosis and the truth, each quoted as a JSON string, never the
doctor's text. Its reply is structured: a JSON object under a JSON schema where litellm
supports ``response_format`` for the provider or the model is served by an OpenAI-compatible
server at ``--agent-api-base`` (vLLM, llama.cpp), otherwise exactly one word, Yes or No. Anything
else ("Correct? No.", "Same condition: no", "Yes, no wait: No") is unreadable: the model is
asked once more, then the item is an *error*, never a verdict, and no unreadable reply is
cached.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

from ..core.case import Case
from ..core.roles import Judgement
from ..core.transcript import Verdict
from ..grading.judging.rules import Policy
from ..llm import client
from ..llm.errors import RequestError
from . import prompts

if TYPE_CHECKING:  # a run that only collects never builds a caller
    from ..llm.caller import ModelCaller

_SCHEMA: dict[str, Any] = {
    "type": "json_schema",
    "json_schema": {"name": "moderator_verdict", "strict": True, "schema": {
        "type": "object", "properties": {"same_condition": {"type": "boolean"}},
        "required": ["same_condition"], "additionalProperties": False}},
}
_JSON_REPLY = 'Reply with JSON only: {"same_condition": true} or {"same_condition": false}.'
_WORD_REPLY = "Reply with exactly one word: Yes or No."
#: The broader rule of each grading policy, as the rules apply it (docs/grading.md).
BROADER: dict[Policy, str] = {
    "strict": ("A broader name that the correct diagnosis is a kind of counts as the same only "
               "when it names one disease with its variants (\"psoriasis\" for plaque "
               "psoriasis), not a family of diseases (\"arthritis\" for rheumatoid arthritis, "
               "\"dementia\" for frontotemporal dementia)."),
    "paper": ("A broader disease name that the correct one is a subtype of counts as the same: "
              "one level up even a family of diseases (\"lymphoma\" for Hodgkin lymphoma), "
              "further up only one disease with its variants, not a family (\"anemia\" for "
              "iron deficiency anemia)."),
}
_AGAIN = "Your reply could not be read. {format}"
_FENCE = re.compile(r"^```(?:json)?\s*|\s*```$", re.I)


def read_verdict(text: str) -> bool | None:
    """The verdict in a moderator reply: True, False, or None when it is not exactly one.

    Readable replies are the JSON object ``{"same_condition": <bool>}`` and the single word
    Yes or No (case, surrounding quotes, markdown emphasis and a final full stop aside).
    """
    body = _FENCE.sub("", text.strip()).strip()
    if body.startswith("{"):
        try:
            value = json.loads(body)
        except ValueError:
            return None
        if isinstance(value, dict) and set(value) == {"same_condition"}:
            same = value["same_condition"]
            return same if isinstance(same, bool) else None
        return None
    word = body.strip("*_`\"' ").rstrip(".!").strip("*_`\"' ").lower()
    return {"yes": True, "no": False}.get(word)


#: Model prefixes served by an OpenAI-compatible server at ``--agent-api-base``.
_SERVED_PREFIXES = ("openai/", "hosted_vllm/")


class LLMModerator:
    """Asks a model whether the extracted diagnosis names the case's diagnosis."""

    role = "moderator"

    def __init__(self, model: str, caller: ModelCaller, policy: Policy = "strict") -> None:
        self.model = model
        self.caller = caller
        #: How broader answers are graded; the prompt states the same rule (:data:`BROADER`).
        self.policy: Policy = policy
        self.prompt_version = prompts.load("moderator").version
        self._schema: bool | None = None

    async def _structured(self) -> bool:
        if self._schema is None:
            # An OpenAI-compatible server of one's own (vLLM, llama.cpp's server, Ollama's
            # /v1) takes a JSON-schema response_format, which keeps a small model to the two
            # readable replies; litellm's table knows the hosted providers that do.
            served = (self.caller.settings.api_base is not None
                      and self.model.startswith(_SERVED_PREFIXES))
            self._schema = served or await client.supports_json_schema(self.model)
        return self._schema

    async def judge(self, case: Case, diagnosis: str, sample: int) -> Judgement:
        """The model's verdict, asked once more if unreadable; then a :class:`RequestError`."""
        structured = await self._structured()
        wanted = _JSON_REPLY if structured else _WORD_REPLY
        prompt = prompts.load("moderator").render(
            truth=json.dumps(case.diagnosis), given=json.dumps(diagnosis),
            synonyms=json.dumps(list(case.synonyms)), reply_format=wanted,
            broader=BROADER[self.policy])
        messages: list[dict[str, Any]] = [{"role": "user", "content": prompt}]
        extra = {"response_format": _SCHEMA} if structured else None
        replies: list[str] = []
        usage = None
        for _ in range(2):
            reply = await self.caller.complete(
                role=self.role, model=self.model, messages=messages, case_id=case.id,
                sample=sample, prompt_version=self.prompt_version, extra=extra,
                readable=lambda text: read_verdict(text) is not None)
            usage = reply.usage if usage is None else usage + reply.usage
            same = read_verdict(reply.text)
            if same is not None:
                return Judgement(Verdict(correct=same, decided_by=self.model,
                                         reason=f"{self.model}: {reply.text.strip()[:120]}"),
                                 usage)
            replies.append(reply.text.strip()[:120])
            messages = [*messages, {"role": "assistant", "content": reply.text},
                        {"role": "user", "content": _AGAIN.format(format=wanted)}]
        raise RequestError(f"moderator {self.model} gave no readable verdict twice: "
                           + " / ".join(repr(r) for r in replies))
