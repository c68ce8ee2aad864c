"""The test price table: what each test the measurement agent can return costs.

The table (``data/test_prices.csv``) was written for this project; each row names its public
source (a CMS fee schedule and year, or "included" for the examination). A request is priced
by the row whose name or alias it matches best (all of the alias's words in the request; the
alias with most words wins); a request no row names costs the ``unlisted test`` row's price
and is listed as unpriced, so an unknown name never makes a test free.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path

from ..core.text import words

PRICE_TABLE_VERSION = 1
UNLISTED = "unlisted test"
#: How a measurement agent's reply starts when the test budget refused the test.
REFUSED = "RESULTS: REFUSED"


@dataclass(frozen=True)
class Price:
    """One row of the table."""

    test: str
    usd: float
    cpt: str
    source: str
    names: tuple[frozenset[str], ...]


def _name(text: str) -> frozenset[str]:
    return frozenset(words(text.replace("-", " ")))


class PriceTable:
    """Looks test requests up in the price rows."""

    def __init__(self, rows: Sequence[Price]) -> None:
        self.rows = list(rows)
        fallback = [r for r in rows if r.test == UNLISTED]
        if not fallback:
            raise ValueError(f"the price table needs an {UNLISTED!r} row")
        self.unlisted = fallback[0]

    @classmethod
    def read(cls, path: Path | str) -> PriceTable:
        """Read a price CSV (``#`` lines are comments); a bad row is a ValueError naming its
        line and field."""
        text = Path(path).read_text(encoding="utf-8")
        return cls(_parse(text, str(path)))

    def lookup(self, request: str) -> Price | None:
        """The best row for ``request``, or None when no row names it."""
        wanted = _name(request)
        best: tuple[int, Price] | None = None
        for row in self.rows:
            for name in row.names:
                if name and name <= wanted and (best is None or len(name) > best[0]):
                    best = (len(name), row)
        return best[1] if best else None

    def price(self, request: str) -> tuple[float, bool]:
        """The price of ``request`` and whether a row named it."""
        row = self.lookup(request)
        return (row.usd, True) if row else (self.unlisted.usd, False)

    def spend(self, requests: Iterable[str]) -> tuple[float, list[str]]:
        """Total price of ``requests`` and the requests no row named."""
        total, unpriced = 0.0, []
        for request in requests:
            usd, known = self.price(request)
            total += usd
            if not known:
                unpriced.append(request)
        return total, unpriced


def _parse(text: str, where: str) -> list[Price]:
    lines = [(n, line) for n, line in enumerate(text.splitlines(), 1)
             if line.strip() and not line.lstrip().startswith("#")]
    reader = csv.DictReader([line for _, line in lines])
    rows = []
    for (lineno, _), raw in zip(lines[1:], reader, strict=True):
        for field in ("test", "usd", "source"):
            if not (raw.get(field) or "").strip():
                raise ValueError(f"{where}:{lineno}: field {field!r}: missing or empty")
        try:
            usd = float(raw["usd"])
        except ValueError:
            raise ValueError(f"{where}:{lineno}: field 'usd': not a number: "
                             f"{raw['usd']!r}") from None
        aliases = [a for a in (raw.get("aliases") or "").split("|") if a.strip()]
        names = tuple(_name(n) for n in [raw["test"], *aliases])
        rows.append(Price(raw["test"].strip(), usd, (raw.get("cpt") or "").strip(),
                          raw["source"].strip(), names if raw["test"] != UNLISTED else ()))
    return rows


@lru_cache(maxsize=1)
def default_prices() -> PriceTable:
    """The table shipped with the plugin."""
    text = resources.files(__package__).joinpath("data/test_prices.csv").read_text("utf-8")
    return PriceTable(_parse(text, "test_prices.csv"))
