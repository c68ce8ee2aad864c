"""The hostile-input and fault matrix in one command: every audit under
``benchmarks/audit/`` (secrets, hostile case files, runs that collide or run out) is run, each
scenario for real in a temporary directory, and one table is printed: input or fault,
outcome, records kept, secrets found. Exits 1 when any secret was found (or an audit itself
failed).

    python benchmarks/bench_hostile.py
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
import time
from pathlib import Path
from typing import Any

from tabulate import tabulate

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

COLUMNS = ("case", "outcome", "records_kept", "secrets_found")
HEADERS = ("input or fault", "outcome", "records kept", "secrets found")


def audit_rows() -> tuple[list[dict[str, Any]], bool]:
    """Every audit module's rows (in module order) and whether an audit itself failed.

    A module that is not there is simply not run: the audits are written separately.
    """
    rows: list[dict[str, Any]] = []
    failed = False
    import audit

    for module in sorted(m.name for m in pkgutil.iter_modules(audit.__path__)):
        started = time.perf_counter()
        try:
            found = importlib.import_module(f"audit.{module}").rows()
        except Exception as exc:  # one broken audit must not hide the others' rows
            failed = True
            found = [{"case": f"audit {module}", "outcome": f"audit failed: "
                      f"{type(exc).__name__}: {exc}", "records_kept": "-", "secrets_found": 0}]
        print(f"audit {module}: {len(found)} rows in {time.perf_counter() - started:.1f} s",
              file=sys.stderr)
        rows.extend(found)
    return rows, failed


def main() -> int:
    """Print the table; 1 when a secret was found or an audit failed."""
    rows, failed = audit_rows()
    print(tabulate([[row.get(c, "") for c in COLUMNS] for row in rows], headers=HEADERS,
                   tablefmt="github"))
    leaks = sum(int(row.get("secrets_found") or 0) for row in rows)
    print(f"\n{len(rows)} scenarios; secrets found: {leaks}")
    return 1 if leaks or failed else 0


if __name__ == "__main__":
    sys.exit(main())
