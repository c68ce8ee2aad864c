"""Word order, generated (docs/terminology.md, *Word order, generated*): a truth written as an
index writes it, its main term before a comma and its modifiers after it ("Gastritis,
eosinophilic"; ICD-10-CM's alphabetic index, MeSH's inverted headings), is the truth; a
sibling so written is that sibling, not the head's family beside a note; and "T, site", "T,
qualifier", "T, W" read as before."""

from __future__ import annotations

import pytest
from adversarial_word_order import index_form
from helpers import POLICIES, WRAPPERS, scores

from pytest_agentclinic.grading.reading.written_names import index_order


@pytest.mark.parametrize("wrap", WRAPPERS)
@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize(("answer", "truth"), [
    # the head before a comma was read alone: a family word, or broader than the truth
    ("Gastritis, eosinophilic", "eosinophilic gastritis"),
    ("Neoplasm, cranial nerve", "cranial nerve neoplasm"),
    ("Torsion, testicular", "Testicular torsion"),
    ("Fracture, femur", "femur fracture"),
    ("Hypertension, masked", "Masked hypertension"),
    ("Carcinoma, lung squamous cell", "lung squamous cell carcinoma"),
    ("The most likely diagnosis is Gastritis, eosinophilic.", "eosinophilic gastritis"),
    # a generic head before the comma named no diagnosis at all
    ("Syndrome, dumping", "Dumping syndrome"),
    ("Disease, Hirschsprung", "Hirschsprung disease"),
    ("Infection, surgical wound", "Surgical wound infection"),
    ("Disorder, schizotypal personality", "Schizotypal personality disorder"),
    # ... whatever its last word ("aspiration" heads a procedure's name)
    ("Syndrome, meconium aspiration", "meconium aspiration syndrome"),
    ("Disorders, fibroblastic", "Fibroblastic disorders"),
    # MeSH's inverted heading read whole: its head is the main term, not "aspiration"
    ("Pneumonia, aspiration", "Aspiration pneumonia"),
    # a look-alike's hyphen written open, where the terminology knows the name
    ("lethal Kniest like dysplasia", "lethal Kniest-like dysplasia"),
    ("Emery Dreifuss like muscular dystrophy", "Emery-Dreifuss-like muscular dystrophy"),
    ("Seckel like syndrome majoor-krakauer type, with mild dehydration",
     "Seckel like syndrome majoor-krakauer type"),
    ("Seckel like syndrome majoor-krakauer type with hepatomegaly",
     "Seckel like syndrome majoor-krakauer type"),
    # an organ's adjective as "of the" and its noun, by the textbook's pairs
    ("Fractures of the zygoma", "Zygomatic fractures"),
    ("ST-elevation infarction of the myocardium", "ST-elevation myocardial infarction"),
    ("Carcinoma of the tongue", "lingual carcinoma"),
])
def test_index_order_names_the_truth(answer: str, truth: str, policy: str, wrap: str) -> None:
    assert scores(wrap.format(answer), truth, policy) == (True, True)


@pytest.mark.parametrize("wrap", WRAPPERS)
@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize(("answer", "truth"), [
    # a sibling the sources state, in an index's order: read at the comma, the head was a
    # broader name of the truth and scored
    ("Meningioma, anterior cranial fossa", "middle cranial fossa meningioma"),
    ("Lipoma, tendon sheath", "pleomorphic lipoma"),
    ("Teratoma, mature gastric", "mature ovarian teratoma"),
    ("Coccidioidomycosis, acute hepatic", "Acute pulmonary coccidioidomycosis"),
    # another organ
    ("Melanoma, pulmonary malignant", "Cutaneous malignant melanoma"),
    ("Porocarcinoma, penile eccrine", "vulvar eccrine porocarcinoma"),
    # "like" before an example, not a look-alike the terminology knows
    ("Viral infection like influenza", "influenza"),
])
def test_index_order_of_a_sibling(answer: str, truth: str, policy: str, wrap: str) -> None:
    assert scores(wrap.format(answer), truth, policy)[0] is False


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize(("answer", "truth", "expected"), [
    # "T, site" and "T, qualifier" for T: the head names the truth, a note beside it
    ("Psoriasis, scalp", "psoriasis", (True, True)),
    ("Cellulitis, left leg", "cellulitis", (True, True)),
    ("Pneumonia, right lower lobe", "pneumonia", (True, True)),
    ("Pneumonia, community-acquired", "pneumonia", (True, True)),
    ("Fracture, femur", "fracture", None),
    # "T, W": a second disease beside the truth is read as before
    ("Pneumonia, asthma", "pneumonia", None),
    ("Asthma, pneumonia", "pneumonia", None),
    # two names of one head, not a head and its modifiers
    ("Acute paronychia, chronic paronychia", "chronic paronychia", None),
    ("Dermatomyositis, polymyositis", "dermatomyositis", None),
])
def test_a_note_or_a_second_name_reads_as_before(answer: str, truth: str,
                                                 expected: tuple[bool, bool] | None,
                                                 policy: str) -> None:
    before = _head_with_note(answer, truth, policy)
    assert scores(f"Final Diagnosis: {answer}", truth, policy) == (expected or before)


def _head_with_note(answer: str, truth: str, policy: str) -> tuple[bool, bool]:
    """How the answer reads with its modifier in brackets after the head (not an index's
    order): "Fracture (femur)", the reading a comma kept before the rule."""
    head, _, note = answer.partition(", ")
    return scores(f"Final Diagnosis: {head} ({note})", truth, policy)


def test_index_order_reading() -> None:
    assert index_order("Gastritis, eosinophilic") == "eosinophilic Gastritis"
    assert index_order("Neoplasm, cranial nerve.") == "cranial nerve Neoplasm"
    # one comma only, and words alone: a list or a clause is no index entry
    assert index_order("Gastritis, eosinophilic, severe") is None
    assert index_order("Gastritis") is None
    assert index_order("Gastritis, (eosinophilic)") is None


def test_the_generator_writes_an_index_entry() -> None:
    # the fixture's {truth_index}: the head noun first, an eponym keeps its capital
    assert index_form("Eosinophilic gastritis") == "Gastritis, eosinophilic"
    assert index_form("Hirschsprung disease") == "Disease, Hirschsprung"
    assert index_form("Diabetes insipidus") is None  # a Latin epithet after its noun
    assert index_form("Coarctation of the aorta") is None


def test_a_long_index_shape_reads_in_linear_time() -> None:
    # bounded word counts on each side of the comma: a failing match tries few splits
    import time

    text = "Gastritis " + "word " * 20_000 + ", eosinophilic"
    started = time.process_time()
    assert index_order(text) is None
    assert scores(f"Final Diagnosis: {'Syndrome, ' * 5_000}dumping", "dumping syndrome")
    assert time.process_time() - started < 5


def test_the_textbook_pairs_stay_through_a_build_of_the_forms() -> None:
    # the build replaces the learned forms (set_word_forms); the textbook's pairs stay
    from pytest_agentclinic.grading import terminology

    pairs = terminology.read_forms(terminology.ANATOMY_FILE)
    assert pairs and all(terminology.word_forms()[v] == c for v, c in pairs.items())
    saved = dict(terminology.word_forms())
    try:
        terminology.set_word_forms({})
        assert terminology.word_forms() == pairs
    finally:
        terminology.set_word_forms(saved)
    # one organ per row: no noun is another row's adjective
    assert not set(pairs.values()) & set(pairs)


def test_the_generator_leaves_an_epithet_after_its_noun() -> None:
    assert index_form("polycythemia vera") is None
    assert index_form("Acute chemical otitis externa") is None
    assert index_form("aleukemic monocytic leukemia cutis") is None
    assert index_form("Dental caries on smooth surface") is None
