"""The names of the reducers over a case's trials, apart from their numpy code: pytest
declares ``--agent-gate-reducer``'s choices in every run, agents or not."""

from __future__ import annotations

REDUCERS = ("mean", "pass@k", "majority", "all")
