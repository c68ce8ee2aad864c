"""MediQ (Li et al., NeurIPS 2024; arXiv 2406.00922) on pytest-agentclinic: does the
expert know when it does not know enough, and ask instead of guessing?

The patient opens with the first context sentence and answers each question only from the
case's atomic facts; the expert (the model under test, role ``doctor``) asks one question or
commits to an option at each step, until a question budget forces an answer. Items are a
case under one *setting* (an item condition, ``-k scale``, ``--agent-gate-on
setting=full``, ``compare --by setting``): the non-interactive baselines ``full``,
``initial``, ``none`` and the interactive experts of :data:`.state.EXPERTS`. Graded by the
option letter. Built only on :mod:`pytest_agentclinic.api`; this module stays light
(imported in every pytest run of its environment): agents and tables load when used.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any, ClassVar

from pytest_agentclinic import api

from .state import BASELINES, EXPERTS, UNKNOWN, Expert, ExpertState

DEFAULT_SETTINGS = ["full", "initial", "none", "basic", "numcutoff", "scale"]


def check_settings(values: tuple[str, ...]) -> tuple[str, ...]:
    """Settings from repeated or comma-separated values; ValueError naming the allowed."""
    out = tuple(dict.fromkeys(v.strip() for value in values for v in value.split(",")
                              if v.strip()))
    for value in out:
        kind, *flags = value.split("-")
        if not ((value in BASELINES) or (kind in EXPERTS and len(set(flags)) == len(flags)
                                         and set(flags) <= {"rg", "sc"})):
            raise ValueError(f"{value!r} is not one of {', '.join(BASELINES)}, or "
                             f"{'|'.join(EXPERTS)} with -rg and/or -sc")
    return out


class MediQ(api.Protocol):
    """MediQ: ask or answer, under a question budget, graded on the option letter."""

    name: ClassVar[str] = "mediq"
    roles: ClassVar[tuple[api.RoleSpec, ...]] = (
        api.RoleSpec("doctor", Expert, None, "the expert: asks one question or answers"),
        api.RoleSpec("patient", api.Agent, None, "answers only from the atomic facts"))
    options: ClassVar[tuple[api.Option, ...]] = (
        api.Option("mediq_setting", "MediQ settings (repeatable or comma-separated): full, "
                   "initial, none, or an expert fixed|basic|binary|numerical|numcutoff|"
                   "scale with -rg and/or -sc", DEFAULT_SETTINGS, "list", "SETTING",
                   check=check_settings),
        api.Option("mediq_questions", "MediQ question budget: the expert's answer is forced "
                   "after this many questions (upstream's --max_questions default)", 30,
                   "int", "N"),
        api.Option("mediq_threshold", "MediQ numcutoff expert: answer at this confidence "
                   "(upstream's PROB_THRESHOLD)", 0.8, "fraction", "P"),
        api.Option("mediq_scale_threshold", "MediQ scale expert: answer at this Likert "
                   "rating, 1-5 (upstream's SCALE_THRESHOLD: somewhat confident)", 4, "int",
                   "N"),
        api.Option("mediq_samples", "MediQ -sc settings: samples of the abstention module "
                   "(self-consistency)", 3, "int", "N"),
    )
    conditions: ClassVar[tuple[str, ...]] = ("setting",)
    wording: ClassVar[api.Wording] = api.Wording(wrong="wrong option", missing="no option")

    def expand(self, cases: Sequence[api.Case], run: api.RunOptions) -> Iterator[api.ItemSpec]:
        """Every case under every setting, doctor and patient model and repeat."""
        o = run.options
        for case in cases:
            for doctor in run.doctors:
                for patient in run.patients:
                    for setting in o["mediq_setting"]:
                        for sample in range(run.repeat):
                            parts = [case.specialty_slug, _slug(doctor)]
                            if len(run.patients) > 1:
                                parts.append(f"patient_{_slug(patient)}")
                            parts.append(setting)
                            if run.repeat > 1:
                                parts.append(f"r{sample}")
                            budget = 0 if setting in BASELINES else int(o["mediq_questions"])
                            yield api.ItemSpec(case, "-".join(parts),
                                               self.models_of(run, doctor, patient), sample,
                                               budget, variant=setting)

    def header(self, item: api.ItemSpec) -> api.ItemHeader:
        """The base header with the setting as the item's condition."""
        return super().header(item).model_copy(update={"conditions": {"setting": item.variant}})

    def expected(self, case: api.Case) -> str:
        """The right option's letter."""
        return str(case.metadata.get("answer_idx", "?"))

    async def play(self, item: api.ItemSpec, ctx: api.PlayContext) -> api.Transcript:
        """One encounter (see :mod:`.encounter`)."""
        from .encounter import play

        return await play(self, item, ctx)

    def measures(self, case: api.Case,
                 transcript: api.Transcript) -> api.EncounterMeasures | None:
        """Questions asked and facts revealed (see :mod:`.encounter`); none for a baseline."""
        from .encounter import measures

        return measures(case, transcript)

    def tables(self, records: Sequence[api.ResultRecord], resamples: int) -> list[api.Table]:
        """Accuracy, questions asked, budget ran out and facts revealed, by setting."""
        from .tables import tables

        return tables(records)

    def summary_fields(self, options: Mapping[str, Any]) -> dict[str, Any]:
        """The settings, the budget and the thresholds of the run."""
        return {"settings": list(options["mediq_setting"]),
                "question_budget": options["mediq_questions"],
                "prob_threshold": options["mediq_threshold"],
                "scale_threshold": options["mediq_scale_threshold"],
                "self_consistency_samples": options["mediq_samples"]}


def _slug(model: str) -> str:
    return model.replace("/", "_").replace(" ", "_")


__all__ = ["BASELINES", "EXPERTS", "UNKNOWN", "Expert", "ExpertState", "MediQ"]
