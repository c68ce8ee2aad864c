"""redact() on hostile 10 MB texts: CPU seconds each (goal: under 1 s).

The old URL-userinfo pattern started a match at every letter of a long word and scanned to
its end each time: 40k letters took 2.5 s, a 10 MB id more than 10 minutes. Each shape below
is the worst case of one pattern; the old pattern is timed on 40k letters for the ratio.

    python benchmarks/bench_redact.py
"""

from __future__ import annotations

import functools
import re
import statistics
import time
from collections.abc import Callable

from pytest_agentclinic.core.redact import redact

SIZE = 10_000_000
SHAPES: dict[str, str] = {
    "letters (a 10 MB id)": "a" * SIZE,
    "scheme:// then letters": "a://" + "b" * SIZE,
    "x://a repeated": "x://a" * (SIZE // 5),
    "bearer repeated": "bearer " * (SIZE // 7),
    "sk- repeated": "sk-" * (SIZE // 3),
    "api-key: repeated": "api-key: " * (SIZE // 9),
}
_OLD_USERINFO = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)[^/\s@]+@")


def cpu(run: Callable[[], object], repeats: int = 3) -> float:
    """Median CPU seconds of ``run``."""
    times = []
    for _ in range(repeats):
        started = time.process_time()
        run()
        times.append(time.process_time() - started)
    return statistics.median(times)


def main() -> None:
    print(f"{'input':<26} {'MB':>5} {'CPU s':>7}")
    for name, text in SHAPES.items():
        print(f"{name:<26} {len(text) / 1e6:>5.1f} {cpu(functools.partial(redact, text)):>7.3f}")
    small = "a" * 40_000
    old = cpu(lambda: _OLD_USERINFO.sub("", small), repeats=1)
    new = cpu(lambda: redact(small))
    print(f"40k letters: old userinfo pattern {old:.2f} s, redact() now {new:.4f} s "
          f"(x{old / max(new, 1e-6):,.0f})")


if __name__ == "__main__":
    main()
