"""Collection: a case file becomes one item per case and variant.

Variants: doctor model x patient model x bias x image mode (image cases only) x turn budget x
repeat. An axis appears in the item's id only when it has several values, so ids stay short.
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from _pytest._code.code import ExceptionInfo, TerminalRepr

from .cases.loaders import CaseError, load_case_file
from .cases.models import Case
from .encounter.transcript import Transcript

RECORD_PROPERTY = "agentclinic_result"
#: Marks an item the run never played (it stopped starting encounters, e.g. on cost).
UNPLAYED_PROPERTY = "agentclinic_unplayed"


@dataclass(frozen=True)
class EncounterSpec:
    """What one item runs."""

    case: Case
    doctor: str
    turn_budget: int
    sample: int
    #: Candidate diagnoses of the case's file, for the offline doctor's baseline.
    candidates: tuple[str, ...]
    patient: str = "offline"
    bias: str = "none"
    #: ``initial`` or ``request`` for cases with images, else None.
    image_mode: str | None = None
    #: CRAFT-MD: the experiment, the answer mode and an MCQ's options.
    experiment: str | None = None
    answer: str | None = None
    options: tuple[str, ...] = ()


class _Message(TerminalRepr):
    """Plain lines in place of a traceback."""

    def __init__(self, text: str) -> None:
        self.text = text

    def toterminal(self, tw: Any) -> None:
        for line in self.text.splitlines():
            tw.line(line)


class CaseLoadError(Exception):
    """A case record that could not be read; shown as a collection error for its line."""


class EncounterError(Exception):
    """The encounter ended in an infrastructure failure: the item's outcome is *error*."""


class EncounterFailed(AssertionError):
    """The moderator judged the diagnosis wrong, or none was given."""


class CaseRecordError(pytest.Collector):
    """Stands for a bad record so its error names file, line and field, and nothing else fails."""

    def __init__(self, *, error: CaseError, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.error = error

    def collect(self) -> list[pytest.Item | pytest.Collector]:
        raise CaseLoadError(str(self.error))

    def repr_failure(self, excinfo: ExceptionInfo[BaseException],
                     style: Any = None) -> str | TerminalRepr:
        del style  # collectors format errors one way
        if isinstance(excinfo.value, CaseLoadError):
            return f"bad case record: {excinfo.value}"
        return super().repr_failure(excinfo)


def _register_marker(config: pytest.Config, case: Case) -> None:
    # Specialties come from data, so their markers are registered as they are met
    # (keeps ``--strict-markers`` runs working).
    known = config.getini("markers")
    if not any(m.split(":")[0] == case.specialty_marker for m in known):
        config.addinivalue_line("markers", f"{case.specialty_marker}: {case.specialty} cases")


def _specialty_pools(cases: Iterator[Case]) -> dict[str, tuple[str, ...]]:
    """Every diagnosis and option seen in each specialty: the many-choice distractors."""
    pools: dict[str, dict[str, None]] = {}
    for case in cases:
        names = pools.setdefault(case.specialty, {})
        names.update(dict.fromkeys([case.diagnosis, *case.choices]))
    return {k: tuple(v) for k, v in pools.items()}


def _options(case: Case, answer: str, by_specialty: dict[str, tuple[str, ...]],
             size: int) -> tuple[str, ...] | None:
    """The options of an item: () for free response, None when the item cannot be asked."""
    if answer == "frq":
        return ()
    if answer == "mcq":
        return tuple(case.choices) if case.diagnosis in case.choices else None
    others = [n for n in by_specialty.get(case.specialty, ())
              if n.lower() != case.diagnosis.lower()]
    # A deterministic, case-specific order: the same options on every run and worker.
    others.sort(key=lambda n: hashlib.sha256(f"{case.id}|{n}".encode()).hexdigest())
    options = sorted([case.diagnosis, *others[: size - 1]],
                     key=lambda n: hashlib.sha256(f"{case.id}|order|{n}".encode()).hexdigest())
    return tuple(options) if len(options) > 1 else None


def _has_context(case: Case, experiment: str) -> bool:
    return bool(case.physical_exam) if experiment == "examonly" else bool(case.vignette)


def _model_slug(model: str) -> str:
    return model.replace("/", "_").replace(" ", "_")


class CaseFile(pytest.File):
    """A file of cases in any supported format."""

    def collect(self) -> Iterator[pytest.Item | pytest.Collector]:
        from .plugin import session_of

        loaded = load_case_file(self.path)
        for error in loaded.errors:
            yield CaseRecordError.from_parent(self, name=f"line-{error.line}", error=error)
        pool = tuple(dict.fromkeys(c.diagnosis for _, c in loaded.cases))
        craftmd = session_of(self.config).settings.protocol == "craftmd"
        by_specialty = _specialty_pools(c for _, c in loaded.cases) if craftmd else {}
        for line, case in loaded.cases:
            _register_marker(self.config, case)
            variants = (self._craftmd_variants(case, pool, by_specialty) if craftmd
                        else self._variants(case, pool))
            for spec, label in variants:
                item = EncounterItem.from_parent(self, name=f"{case.id}[{label}]", spec=spec,
                                                 line=line)
                item.add_marker(case.specialty_marker)
                yield item

    def _craftmd_variants(self, case: Case, pool: tuple[str, ...],
                          by_specialty: dict[str, tuple[str, ...]],
                          ) -> Iterator[tuple[EncounterSpec, str]]:
        from .plugin import session_of

        s = session_of(self.config).settings
        axes = itertools.product(s.doctors, s.patients, s.experiments, s.answers,
                                 range(s.repeat))
        for doctor, patient, experiment, answer, sample in axes:
            options = _options(case, answer, by_specialty, s.many_choices)
            if options is None or not _has_context(case, experiment):
                continue  # e.g. an MCQ without choices, exam-only without an examination
            parts = [case.specialty_slug, _model_slug(doctor)]
            if len(s.patients) > 1:
                parts.append(f"patient_{_model_slug(patient)}")
            parts += [experiment, answer]
            if s.repeat > 1:
                parts.append(f"r{sample}")
            yield (EncounterSpec(case, doctor, s.turns[0], sample, pool, patient,
                                 experiment=experiment, answer=answer, options=options),
                   "-".join(parts))

    def _variants(self, case: Case,
                  pool: tuple[str, ...]) -> Iterator[tuple[EncounterSpec, str]]:
        from .plugin import session_of

        s = session_of(self.config).settings
        modes: tuple[str | None, ...] = s.image_modes if case.images else (None,)
        axes = itertools.product(s.doctors, s.patients, s.biases, modes, s.turns,
                                 range(s.repeat))
        for doctor, patient, bias, mode, budget, sample in axes:
            parts = [case.specialty_slug, _model_slug(doctor)]
            if len(s.patients) > 1:
                parts.append(f"patient_{_model_slug(patient)}")
            if s.biases != ("none",):
                parts.append(bias.replace(":", "_"))
            if len(modes) > 1:
                parts.append(f"img_{mode}")
            if len(s.turns) > 1:
                parts.append(f"t{budget}")
            if s.repeat > 1:
                parts.append(f"r{sample}")
            spec = EncounterSpec(case, doctor, budget, sample, pool, patient, bias, mode)
            yield spec, "-".join(parts)


class EncounterItem(pytest.Item):
    """One encounter; passes when the moderator judges the diagnosis correct."""

    def __init__(self, *, spec: EncounterSpec, line: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.spec = spec
        self.line = line
        self.transcript: Transcript | None = None
        self.transcript_path: str | None = None

    def setup(self) -> None:
        """Obtain the encounter's result (run concurrently by the session's runner).

        An infrastructure failure raises here so pytest reports an *error*, not a failure.
        """
        from .plugin import session_of

        session_of(self.config).finish_item(self)
        t = self.transcript
        assert t is not None
        if t.outcome == "error":
            raise EncounterError(f"{t.error}\ntranscript: {self.transcript_path}")

    def runtest(self) -> None:
        """Assert the verdict."""
        t = self.transcript
        assert t is not None
        if t.outcome == "correct":
            return
        tests = ", ".join(t.tests_requested) or "none"
        given = t.diagnosis if t.outcome == "incorrect" else "no diagnosis"
        reason = f" ({t.verdict.decided_by}: {t.verdict.reason})" if t.verdict else ""
        raise EncounterFailed(
            f"{'misdiagnosis' if t.outcome == 'incorrect' else 'no diagnosis'}{reason}\n"
            f"  expected:   {self.spec.case.diagnosis}\n"
            f"  given:      {given}\n"
            f"  turns used: {t.turns_used}/{t.turn_budget}\n"
            f"  tests:      {tests}\n"
            f"  transcript: {self.transcript_path}")

    def repr_failure(self, excinfo: ExceptionInfo[BaseException],
                     style: Any = None) -> str | TerminalRepr:
        if isinstance(excinfo.value, (EncounterFailed, EncounterError)):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style=style)

    def _repr_failure_py(self, excinfo: ExceptionInfo[BaseException],
                         style: Any = None) -> TerminalRepr:
        # pytest formats setup errors here rather than in repr_failure; an encounter's
        # infrastructure error is a message, not a traceback into the harness.
        if isinstance(excinfo.value, EncounterError):
            return _Message(str(excinfo.value))
        return super()._repr_failure_py(excinfo, style=style)

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, self.line - 1, f"{self.spec.case.id} ({self.spec.case.dataset})"
