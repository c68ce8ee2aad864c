"""Pydantic models of an OSCE-structured case, the unit every protocol runs on."""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue, field_validator, model_validator

from .versioned import Format

CASE_FORMAT_VERSION = 1
#: A case's fields (a case file's case, or a case document's ``version``).
CASE_FORMAT = Format("case", CASE_FORMAT_VERSION, unversioned=1)

#: The twelve CRAFT-MD specialties; any other label is kept as given.
KNOWN_SPECIALTIES: tuple[str, ...] = (
    "Dermatology",
    "Hematology and Oncology",
    "Neurology",
    "Gastrointestinal System",
    "Pediatrics and Neonatology",
    "Cardiovascular System",
    "Infectious Diseases",
    "Obstetrics and Gynecology",
    "Renal and Genitourinary System",
    "Endocrinology",
    "Rheumatology",
    "Other",
)
UNSPECIFIED = "unspecified"

#: Free-form findings: names map to a value or to a nested group of findings.
Findings = dict[str, Any]


def slugify(text: str, sep: str = "-") -> str:
    """Lower-case ``text`` and join its alphanumeric runs with ``sep``."""
    return sep.join(re.findall(r"[a-z0-9]+", text.lower()))


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, str_strip_whitespace=True)


class Symptoms(_Strict):
    """The complaint that brought the patient in, and what goes with it."""

    primary: str = ""
    secondary: list[str] = Field(default_factory=list)


class PatientActor(_Strict):
    """What the patient knows and may tell: never the diagnosis."""

    demographics: str = ""
    history: str = ""
    symptoms: Symptoms = Field(default_factory=Symptoms)
    past_medical_history: str = ""
    medications: str = ""
    social_history: str = ""
    family_history: str = ""
    review_of_systems: str = ""
    #: Anything else upstream files carry (allergies, lifestyle...), by field name.
    other: dict[str, str] = Field(default_factory=dict)


class Image(_Strict):
    """An image that belongs to the case: a URL or a local path."""

    url: str | None = None
    path: str | None = None
    caption: str = ""

    @model_validator(mode="after")
    def _one_source(self) -> Image:
        if not (self.url or self.path):
            raise ValueError("an image needs a url or a path")
        return self


class Case(_Strict):
    """One OSCE case: what each agent is told and what the moderator judges against."""

    version: int = CASE_FORMAT_VERSION
    id: str
    dataset: str
    specialty: str = UNSPECIFIED
    difficulty: Literal["easy", "medium", "hard"] | None = None
    objective: str
    patient: PatientActor
    physical_exam: Findings = Field(default_factory=dict)
    tests: Findings = Field(default_factory=dict)
    diagnosis: str
    synonyms: list[str] = Field(default_factory=list)
    choices: list[str] = Field(default_factory=list)
    images: list[Image] = Field(default_factory=list)
    vignette: str = ""
    question: str = ""
    #: Facts the diagnosis hinges on (phrases of the case's own text); they mark *key* facts
    #: for the information-gathering measures (premature closure, share of key facts).
    key_facts: list[str] = Field(default_factory=list)
    #: A protocol's own case fields (a triage protocol's ``urgency``, a management
    #: benchmark's plan), by name: any JSON value. The other fields stay closed, so a typo
    #: in them is still an error; what a protocol needs here it checks itself.
    metadata: dict[str, JsonValue] = Field(default_factory=dict)

    @field_validator("id", "objective", "diagnosis")
    @classmethod
    def _not_empty(cls, value: str) -> str:
        if not value:
            raise ValueError("must not be empty")
        return value

    @field_validator("version")
    @classmethod
    def _known_version(cls, value: int) -> int:
        # A case of a newer format may mean something else field by field: refuse it.
        return CASE_FORMAT.check(value)

    @field_validator("id")
    @classmethod
    def _id_chars(cls, value: str) -> str:
        if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*", value):
            raise ValueError("use letters, digits, '.', '_' and '-' only")
        return value

    @property
    def specialty_slug(self) -> str:
        """The specialty as it appears in node ids (``-k dermatology``)."""
        return slugify(self.specialty) or UNSPECIFIED

    @property
    def specialty_marker(self) -> str:
        """The specialty as a marker name (``-m dermatology``)."""
        return slugify(self.specialty, "_") or UNSPECIFIED

    @property
    def accepted_diagnoses(self) -> list[str]:
        """The correct diagnosis followed by its accepted synonyms."""
        return [self.diagnosis, *self.synonyms]
