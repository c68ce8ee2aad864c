"""Truths nobody tuned to, drawn from the bundled terminology itself
(``benchmarks/bench_adversarial.py --truths sources``): disease concepts of ICD-10-CM (its
disease chapters), MeSH's disease headings, the Disease Ontology and MONDO, each written as a
clinician writes a diagnosis, with up to three of its siblings as the wrong answer choices.

Concepts are sampled in a fixed order by a hash of their id and name (as
``benchmarks/leave_one_out.py`` samples pairs), an even share from each source, and split in
halves by the hash the other truth sets use (:func:`adversarial_truths.half_of`). Only the
bundled table is read: no network, no ``../shared``.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache

from adversarial import Pool, truth_key
from adversarial_truths import Truths

from pytest_agentclinic.core.case import Case, PatientActor
from pytest_agentclinic.grading.terminology import key
from pytest_agentclinic.grading.terminology_table import DATA_FILE, Row, read_table
from pytest_agentclinic.grading.terms.concepts import Terminology, default_terminology
from pytest_agentclinic.grading.terms.concurrent import finding
from pytest_agentclinic.grading.terms.eponym_words import eponyms
from pytest_agentclinic.grading.terms.kinds import kind
from pytest_agentclinic.grading.terms.readings import disease_concept, names_a_disease

#: The name of the set on the benchmark's command line.
NAME = "sources"
#: The sources sampled, an even share each (EFO is MONDO's disease branch: one witness).
SOURCES = ("ICD", "MESH", "DOID", "MONDO")
#: How many concepts in all (about; a source short of eligible names gives fewer).
COUNT = 600
#: A clinician writes a diagnosis in a few words.
MAX_WORDS = 6

_WORD = re.compile(r"[A-Za-z0-9']+")
#: Words of a name that no clinician writes as a diagnosis: ICD-10-CM's residual and coding
#: axes ("Other ...", "..., unspecified", "..., left"), combination codes ("X with Y", "X
#: without Y"), classes ("... classified elsewhere", "by site"), ontology bookkeeping.
_NOT_WRITTEN = re.compile(
    r"\b(?:other|unspecified|nos|nec|left|right|bilateral|unilateral|elsewhere"
    r"|classified|by|or|and/or|obsolete|susceptibility|sequelae?|history|encounter|site"
    r"|experimental|model"
    r"|stage|grade|type\s+[a-z]\b|trimester|weeks?|episode|status|not|certain|specified"
    r"|situ|related|associated|complicating|affecting|following|involving|part|region)\b",
    re.I)
#: ICD-10-CM's combination codes: a clinician names the two conditions, not the code.
_COMBINED = re.compile(r"\b(?:with|without|due|in)\b", re.I)
#: A digit is a gene, a numbered subtype ("... type 2J", "... type 85") or a code; but "type
#: 1" and "type 2" are how clinicians name a disease's two kinds ("type 2 diabetes mellitus").
_TYPE = re.compile(r"\btype [12]\b", re.I)
#: A concept filed under the animal diseases, or a model of a disease in animals.
_ANIMAL = frozenset({"MESH:D000820", "MONDO:0005583", "EFO:0005932"})
#: A parent with more children than this is a bin ("rare genetic disease"), not a family
#: whose members a clinician weighs against each other.
_FAMILY = 40
#: A concept with more concepts below it than this (counted as :meth:`.Terminology.breadth`
#: counts: MeSH first) is a class ("heart disorder", "X-linked monogenic disease").
_CLASS_BREADTH = 60
#: Words that say only which kind of disease, not which: with site words alone they name a
#: class ("kidney disorder", "hereditary disease", "Facial Nerve Diseases").
_CLASS_WORDS = frozenset({
    "hereditary", "inherited", "genetic", "congenital", "acquired", "infectious", "rare",
    "familial", "primary", "secondary", "idiopathic", "nutritional", "metabolic", "benign",
    "malignant", "neoplasm", "cancer", "tumor", "disease", "disorder", "syndrome", "abnormality",
    "anomaly", "infection", "inflammatory", "degenerative", "autoimmune", "developmental",
    "acute", "chronic", "neoplastic", "vascular", "functional", "organic", "systemic", "human",
    "animal", "physiological", "pathological", "condition", "lesion", "injury", "complication",
    "anatomical", "entity", "physical", "mental", "health", "characteristic", "grading",
    "movement", "experimental"})
#: The plural head of a MeSH heading that groups diseases ("Rectal Neoplasms", "Lung
#: Diseases"): a class, not one diagnosis, unless another source names the concept.
_GROUP_HEAD = re.compile(r"(?:diseases|disorders|neoplasms|abnormalities|infections|injuries"
                         r"|syndromes|conditions|complications|manifestations|changes"
                         r"|defects|tumors|deficiencies)$", re.I)


@dataclass(frozen=True)
class _Concept:
    ident: str
    cluster: str
    parents: tuple[str, ...]
    name: str


def source_truths(count: int = COUNT, terms: Terminology | None = None) -> Truths:
    """About ``count`` disease concepts of :data:`SOURCES` as cases (an even share of each,
    in hash order, one per cluster and written name), each with its siblings as choices."""
    terms = terms or default_terminology()
    concepts, tally = _eligible(read_table(DATA_FILE)[1], terms)
    children: dict[str, list[_Concept]] = {}
    for c in concepts.values():
        for parent in c.parents:
            children.setdefault(parent, []).append(c)
    share = count // len(SOURCES)
    taken_clusters: set[str] = set()
    taken_names: set[str] = set()
    cases: list[Case] = []
    for source in SOURCES:
        mine = sorted((c for c in concepts.values() if c.ident.startswith(f"{source}:")),
                      key=lambda c: _rank(c.ident, c.name))
        picked = 0
        for c in mine:
            if picked == share:
                break
            if c.cluster in taken_clusters or truth_key(c.name) in taken_names:
                tally["duplicates"] += 1
                continue
            taken_clusters.add(c.cluster)
            taken_names.add(truth_key(c.name))
            cases.append(_case(c, list(_siblings(c, children, terms))))
            picked += 1
    cases.sort(key=lambda case: _rank(case.id, case.diagnosis))
    return Truths(NAME, Pool(tuple(cases)), tally["read"], tally["duplicates"],
                  tally["not_conditions"], tally["not_written"])


def _rank(*parts: str) -> str:
    # benchmarks/leave_one_out.py's sampling order: a hash of the concept's id and name
    return hashlib.sha1("\t".join(parts).encode()).hexdigest()


def _eligible(rows: list[Row], terms: Terminology) -> tuple[dict[str, _Concept], dict[str, int]]:
    """The concepts of :data:`SOURCES` that name a disease a clinician writes, by id, and
    how many were read and left out (no condition; not written as a clinician writes)."""
    labels = {r.id: r.names[0] for r in rows}
    members: dict[str, list[str]] = {}
    for r in rows:
        members.setdefault(r.cluster, []).append(r.id)
    tally = {"read": 0, "duplicates": 0, "not_conditions": 0, "not_written": 0}
    out: dict[str, _Concept] = {}
    for r in rows:
        if not _sampled_source(r.id):
            continue
        tally["read"] += 1
        name = clinician_name(r, [labels[m] for m in members[r.cluster]
                                  if m.startswith(("DOID:", "MONDO:"))])
        if name is None or not _a_diagnosis_in_place(r.id, terms):
            tally["not_written"] += 1
        elif not is_diagnosis(name, terms):
            tally["not_conditions"] += 1
        else:
            out[r.id] = _Concept(r.id, r.cluster, r.parents, name)
    return out, tally


def _a_diagnosis_in_place(ident: str, terms: Terminology) -> bool:
    """Whether the concept is no class at the top of its source's tree (within two levels of
    its root: "disease of anatomical entity"; ICD-10-CM's codes all sit two levels below
    their chapter, and each is a diagnosis) and no disease of animals or model of one."""
    above = terms.ancestors(ident)
    if above.keys() & _ANIMAL or terms.breadth(ident) > _CLASS_BREADTH:
        return False
    return ident.startswith("ICD:") or max(above.values(), default=0) > 2


def _sampled_source(ident: str) -> bool:
    """ICD-10-CM's disease codes (chapters A to Q: R holds findings, S to Z injuries,
    causes and encounters), MeSH's descriptors (not its supplementary records), DOID, MONDO."""
    source = ident.split(":")[0]
    if source == "ICD":
        return disease_concept(ident) and bool(re.fullmatch(r"ICD:[A-Q]\d\d(?:\.\w+)?", ident))
    if source == "MESH":
        return ident.startswith("MESH:D")
    return source in ("DOID", "MONDO")


def clinician_name(row: Row, natural: list[str]) -> str | None:
    """``row``'s preferred name as a clinician writes it, or None when it is none a clinician
    writes: MeSH's inverted heading in natural order (its own entry term in that order, or the
    Disease Ontology's or MONDO's name of the concept; "Carcinoma, Small Cell": "Small cell
    carcinoma"), in sentence case; no residual or coding axis, class, number or long name."""
    name = row.names[0]
    if row.id.startswith("ICD:"):
        # the code's names: not an eponym alone from its bracket ("[Forestier]")
        name = next((n for g, n in zip(row.grades, row.names, strict=True) if g == "p"
                     and not (" " not in n and n.lower() in eponyms())), "")
    if row.id.startswith("MESH:"):
        natural_name = _natural_mesh(name, row.names, natural)
        if natural_name is None:
            return None
        name = natural_name
    if "," in name or "[" in name or "(" in name or "/" in name:
        return None
    words = _WORD.findall(name)
    if not words or len(words) > MAX_WORDS or _NOT_WRITTEN.search(name) \
            or re.search(r"\d", _TYPE.sub("", name)) or re.search(r"\band\b", name) \
            or (row.id.startswith("ICD:") and _COMBINED.search(name)):
        return None
    if not key(name) - _CLASS_WORDS - default_terminology().site_words:
        return None
    return name


def _natural_mesh(label: str, names: tuple[str, ...], natural: list[str]) -> str | None:
    same = [n for n in natural if key(n) == key(label)]
    if "," not in label and not _GROUP_HEAD.search(label):
        return _sentence_case(label) if not same else same[0]
    if _GROUP_HEAD.search(label.split(",")[0]):
        # a heading that groups diseases: the concept's name in another source, if any
        return natural[0] if natural else None
    if same:
        return same[0]
    turned = " ".join(part.strip() for part in reversed(label.split(",")))
    written = [n for n in names if _WORD.findall(n.lower()) == _WORD.findall(turned.lower())]
    return _sentence_case(written[0] if written else turned)


def _sentence_case(name: str) -> str:
    """MeSH's Title Case as a clinician writes it: acronyms and proper names (:func:`_proper`)
    keep their capital."""
    words = name.split(" ")
    proper = _proper()
    return " ".join([words[0]] + [w if w.isupper() or w.lower().rstrip("'s") in proper
                                  else w.lower() for w in words[1:]])


@cache
def _proper() -> frozenset[str]:
    """Proper names, lower-cased: the words that the Disease Ontology and MONDO, which write
    names in lower case, capitalise and never write in lower case ("Crohn",
    "Hodgkin"; not "cell", which an eponym list built from possessives also holds)."""
    upper: set[str] = set()
    lower: set[str] = set()
    for row in read_table(DATA_FILE)[1]:
        if row.id.startswith(("DOID:", "MONDO:")):
            for word in row.names[0].split(" "):
                (upper if word[:1].isupper() else lower).add(word.lower().rstrip("'s"))
    return frozenset(upper - lower)


def is_diagnosis(name: str, terms: Terminology) -> bool:
    """Whether ``name`` is a disease by the terminology's kinds: a condition (no test,
    treatment or drug), no sign, symptom or finding (:func:`.concurrent.finding`: ICD-10-CM's
    chapter R, MeSH's Signs and Symptoms, an enlarged organ, a count out of range; also when
    the name says at what age it was found), some concept of it a disease."""
    at_an_age = _AT_AN_AGE.sub("", name)
    return kind(name) == "condition" and not finding(name) and not finding(at_an_age) \
        and names_a_disease(name, terms) and terms.known(name)


#: When a finding is found ("Hyperkalemia of newborn"): it is still a finding.
_AT_AN_AGE = re.compile(r"\s+(?:of|in)\s+(?:the\s+)?(?:newborn|prematurity|infancy|childhood"
                        r"|pregnancy)$", re.I)


def _siblings(concept: _Concept, children: dict[str, list[_Concept]],
              terms: Terminology) -> Iterator[str]:
    """Up to three other concepts under a parent of ``concept`` (in its own source), in hash
    order: none of its cluster, none the terminology relates to it as synonym, broader or
    narrower (a realistic distractor is another disease, not the same one)."""
    found: list[str] = []
    candidates = sorted({s for p in concept.parents for s in children.get(p, ())
                         if s.ident != concept.ident and len(children[p]) <= _FAMILY},
                        key=lambda s: _rank(s.ident, s.name))
    for s in candidates:
        if len(found) == 3:
            break
        if s.cluster == concept.cluster or key(s.name) == key(concept.name) \
                or any(key(s.name) == key(f) for f in found):
            continue
        link = terms.link(key(s.name), key(concept.name))
        if link is not None and link.kind != "sibling":
            continue
        found.append(s.name)
    yield from found


def _case(concept: _Concept, siblings: list[str]) -> Case:
    """The concept as a case: its name the truth, its siblings the wrong choices (the truth
    placed among them by the hash, as a dataset's answer key would)."""
    choices = list(siblings)
    if choices:
        at = int(_rank(concept.name), 16) % (len(choices) + 1)
        choices.insert(at, concept.name)
    ident = re.sub(r"[^A-Za-z0-9_.-]", "-", concept.ident.lower().replace(":", "-"))
    return Case(id=ident, dataset=NAME, objective="Diagnose the patient.",
                patient=PatientActor(), diagnosis=concept.name, choices=choices)
