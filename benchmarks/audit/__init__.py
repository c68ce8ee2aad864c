"""The hostile-input and fault audit: each module here exposes ``rows() -> list[dict]``
(keys: case, outcome, records_kept, secrets_found); ``benchmarks/bench_hostile.py`` runs
them all and prints one table."""
