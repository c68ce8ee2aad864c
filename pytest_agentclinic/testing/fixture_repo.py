"""A repository that has nothing to do with agents, for checking that the plugin leaves it
alone: one test and data fixtures of every kind the plugin reads (JSON, YAML, CSV), the empty
and header-only ones included. The suite builds a small one, the startup benchmark 2,000."""

from __future__ import annotations

from pathlib import Path

__all__ = ["FIXTURES", "fixture_repository"]

#: A repository's data fixtures the plugin must leave alone.
FIXTURES = {"empty.json": "", "object.json": "{}", "list.json": "[]", "blank.yaml": "",
            "config.yml": "retries: 3\nnames: [a, b]\n", "header.csv": "id,name,value\n",
            "lines.jsonl": "{}\n[]\n", "broken.json": "{not json", "rows.csv": "a,b\n1,2\n"}


def fixture_repository(root: Path, small_json: int) -> Path:
    """Write the repository under ``root``: ``tests/test_data.py``, the :data:`FIXTURES` and
    ``small_json`` small JSON records under ``tests/data/``; return ``root``."""
    data = root / "tests" / "data"
    data.mkdir(parents=True)
    (root / "tests" / "test_data.py").write_text(
        "from pathlib import Path\n\n"
        "def test_fixtures():\n"
        "    assert (Path(__file__).parent / 'data' / 'empty.json').exists()\n")
    for name, text in FIXTURES.items():
        (data / name).write_text(text)
    for index in range(small_json):
        (data / f"record{index:04d}.json").write_text(f'{{"id": {index}, "label": "x"}}')
    return root
