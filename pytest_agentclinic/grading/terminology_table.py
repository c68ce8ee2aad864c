"""The one reader and writer of the bundled terminology table (``data/terminology.tsv.gz``).

A gzip'd TSV. Header lines start with ``#``: the format version, the fingerprint of the name
normaliser the keys were computed with, and the site words. Then one line per concept::

    id <TAB> cluster <TAB> parent,parent <TAB> grades <TAB> key|key <TAB> name|name

``id`` is ``SOURCE:local`` (``ICD:B05``, ``MESH:D008457``, ``DOID:8622``, ``MONDO:0005090``,
``EFO:0000692``); ``cluster`` is the id shared by concepts of several sources that are one
disease; each name comes with its grade, one letter each in ``grades`` (``p`` preferred name,
``s`` curated synonym, ``i`` ICD-10-CM inclusion term, ``r`` synonym of unknown scope), and
its precomputed key (sorted normalised content words), so loading needs no normalisation.
"""

from __future__ import annotations

import gzip
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

DATA_FILE = Path(__file__).with_name("data") / "terminology.tsv.gz"
FORMAT_VERSION = "2"
_MAGIC = "# agentclinic disease terminology"


@dataclass(frozen=True)
class Row:
    """One concept as stored: its names with grade and key, in the same order."""

    id: str
    cluster: str
    parents: tuple[str, ...]
    grades: tuple[str, ...]
    keys: tuple[str, ...]
    names: tuple[str, ...]


@dataclass(frozen=True)
class Header:
    """What the table says about itself."""

    version: str
    normaliser: str
    site_words: frozenset[str]


def write_table(path: Path, header: Header, rows: Iterable[Row]) -> None:
    """Write the table; the bytes depend only on the content (gzip mtime 0)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with (open(path, "wb") as raw,
          gzip.GzipFile(filename="", fileobj=raw, mode="wb", mtime=0) as gz):
        gz.write(f"{_MAGIC}\tversion={header.version}\tnormaliser={header.normaliser}\n"
                 .encode())
        gz.write(f"# site-words\t{' '.join(sorted(header.site_words))}\n".encode())
        for row in rows:
            names = "|".join(n.replace("|", "/").replace("\t", " ") for n in row.names)
            gz.write(f"{row.id}\t{row.cluster}\t{','.join(row.parents)}\t{''.join(row.grades)}"
                     f"\t{'|'.join(row.keys)}\t{names}\n".encode())


def read_table(path: Path = DATA_FILE) -> tuple[Header, list[Row]]:
    """Read the whole table; ValueError naming file and line on a malformed one."""
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        return _parse(path, handle)


def _parse(path: Path, lines: Iterable[str]) -> tuple[Header, list[Row]]:
    fields: dict[str, str] = {}
    sites: frozenset[str] = frozenset()
    rows: list[Row] = []
    for number, line in enumerate(lines, 1):
        line = line.rstrip("\n")
        if line.startswith(_MAGIC):
            fields = dict(f.split("=", 1) for f in line.split("\t")[1:])
        elif line.startswith("# site-words\t"):
            sites = frozenset(line.split("\t", 1)[1].split())
        else:
            rows.append(_row(path, number, line))
    if fields.get("version") != FORMAT_VERSION:
        raise ValueError(f"{path}:1: field 'version': expected {FORMAT_VERSION}, "
                         f"got {fields.get('version')!r}")
    return Header(fields["version"], fields.get("normaliser", ""), sites), rows


def _row(path: Path, number: int, line: str) -> Row:
    parts = line.split("\t")
    if len(parts) != 6:
        raise ValueError(f"{path}:{number}: expected 6 tab-separated fields, got {len(parts)}")
    ident, cluster, parents, grades, keys, names = parts
    key_list, name_list = keys.split("|"), names.split("|")
    if not len(grades) == len(key_list) == len(name_list) or grades.strip("psir"):
        raise ValueError(f"{path}:{number}: field 'names': grades, keys and names do not "
                         "pair up")
    return Row(ident, cluster, tuple(parents.split(",")) if parents else (), tuple(grades),
               tuple(key_list), tuple(name_list))
