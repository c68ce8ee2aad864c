"""Build the bundled ICD-10-CM terminology table from the ``simple-icd-10-cm`` package.

Run at build time only (``python tools/build_terminology.py``): the
grader reads the generated ``data/icd10cm_terms.tsv.gz`` and never imports the package, whose
import alone parses a 10 MB XML file (about 2 s). ICD-10-CM is a US government work in the
public domain; ``simple-icd-10-cm`` (MIT) ships the official CMS tabular release.

One line per code: ``code <TAB> parent <TAB> name | name | ...`` where the names are the
code's description followed by its inclusion terms. Seventh-character extensions (encounter
types of injuries) are left out: they name no new condition.
"""

from __future__ import annotations

import argparse
import gzip
import importlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

# The table ships with the runtime package; this script does not.
DEFAULT_OUTPUT = (Path(__file__).resolve().parents[1] / "pytest_agentclinic" / "grading" / "data"
                  / "icd10cm_terms.tsv.gz")


def _rows(cm: Any) -> Iterator[tuple[str, str, list[str]]]:
    """(code, parent, names) for every chapter, block, category and subcategory."""
    seen: set[str] = set()
    for code in cm.get_all_codes(with_dots=True):
        # A block holding a single category shares its name ("B10"): one row for both,
        # whose parent is the block's parent.
        if code in seen or cm.is_extended_subcategory(code):
            continue
        seen.add(code)
        parent = cm.get_parent(code) or ""
        if parent == code:
            parent = cm.get_parent(code, prioritize_blocks=True) or ""
        names = [cm.get_description(code), *cm.get_inclusion_term(code)]
        clean = [" ".join(name.replace("|", "/").split()) for name in names]
        yield code, parent, [n for n in clean if n]


def build(output: Path = DEFAULT_OUTPUT) -> int:
    """Write the table to ``output``; return the number of codes written."""
    # A build-time dependency only, untyped: imported by name so type checking needs no stubs.
    cm: Any = importlib.import_module("simple_icd_10_cm")

    output.parent.mkdir(parents=True, exist_ok=True)
    count = 0
    # mtime=0 keeps the gzip bytes reproducible from one build to the next.
    with (open(output, "wb") as raw,
          gzip.GzipFile(filename="", fileobj=raw, mode="wb", mtime=0) as gz):
        for code, parent, names in _rows(cm):
            gz.write(f"{code}\t{parent}\t{' | '.join(names)}\n".encode())
            count += 1
    return count


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT)
    args = parser.parse_args(argv)
    count = build(args.output)
    print(f"wrote {count} codes to {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
