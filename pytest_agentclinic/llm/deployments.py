"""``--agent-models``: deployments in litellm's ``model_list`` format, read and checked.

::

    model_list:
      - model_name: doctor-llm            # what --agent-doctor names (and the cache keys)
        litellm_params: {model: hosted_vllm/qwen, api_base: http://gpu1:8000/v1, rpm: 300}
      - model_name: doctor-llm
        litellm_params: {model: hosted_vllm/qwen, api_base: http://gpu2:8000/v1, rpm: 300}

Each ``model_name`` is a group that litellm's Router balances over; ``rpm``/``tpm`` may sit in
``litellm_params`` or beside it. A group's limits are the sums of its deployments' (a group
with one deployment of unknown limits stays unlimited and adapts).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.errors import InputError
from ..core.redact import register_params
from .limiter import Budget


class ModelsFileError(InputError):
    """A models file that cannot be used; the message names the file, entry and field."""


@dataclass(frozen=True)
class Deployments:
    """The model list as litellm's Router takes it, and each group's limits."""

    model_list: tuple[dict[str, Any], ...]
    budgets: dict[str, Budget]

    @property
    def names(self) -> tuple[str, ...]:
        """The groups, in file order."""
        return tuple(dict.fromkeys(e["model_name"] for e in self.model_list))


def load(path: Path) -> Deployments:
    """Read ``path``; :class:`ModelsFileError` on anything litellm's Router would reject."""
    import yaml  # here: a run without a models file (most) does not import it

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ModelsFileError(f"{path}: cannot read: {exc.strerror}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f":{mark.line + 1}" if mark is not None else ""
        raise ModelsFileError(f"{path}{where}: not valid YAML") from None
    entries = data.get("model_list") if isinstance(data, dict) else data
    if not isinstance(entries, list) or not entries:
        raise ModelsFileError(f"{path}: expected a non-empty 'model_list:' of deployments")
    model_list = tuple(_entry(path, i, e) for i, e in enumerate(entries, start=1))
    return Deployments(model_list, _budgets(model_list))


def _entry(path: Path, index: int, entry: Any) -> dict[str, Any]:
    where = f"{path}: deployment {index}"
    if not isinstance(entry, dict):
        raise ModelsFileError(f"{where}: expected a mapping with model_name and litellm_params")
    name, params = entry.get("model_name"), entry.get("litellm_params")
    if not isinstance(name, str) or not name.strip():
        raise ModelsFileError(f"{where}: field 'model_name' is missing")
    if not isinstance(params, dict) or not isinstance(params.get("model"), str):
        raise ModelsFileError(f"{where} ({name}): field 'litellm_params.model' is missing")
    for field in ("rpm", "tpm"):
        for value in (entry.get(field), params.get(field)):
            if value is not None and (not isinstance(value, (int, float)) or value <= 0):
                raise ModelsFileError(f"{where} ({name}): field '{field}' must be a positive "
                                      f"number, got {value!r}")
    # A key written inline (``api_key: ...``, or in an api base's query) is masked in all
    # this process writes and prints from now on, echoed by a model or quoted by an error.
    register_params(params)
    return dict(entry)


def _budgets(model_list: tuple[dict[str, Any], ...]) -> dict[str, Budget]:
    sums: dict[str, dict[str, float | None]] = {}
    for entry in model_list:
        group = sums.setdefault(entry["model_name"], {"rpm": 0.0, "tpm": 0.0})
        for field in ("rpm", "tpm"):
            value = entry.get(field) or entry["litellm_params"].get(field)
            current = group[field]
            # One deployment without a limit makes the group's sum unknown.
            group[field] = None if value is None or current is None else current + value
    return {name: Budget(g["rpm"], g["tpm"]) for name, g in sums.items()}
