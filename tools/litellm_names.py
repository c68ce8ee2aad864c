"""Regenerate ``pytest_agentclinic/llm/data/litellm_names.json`` from the installed litellm:
its provider prefixes and the bare model names it knows (with each one's provider).

The plugin checks ``--agent-doctor``-style model strings against this file at startup, so
a typo is rejected at once instead of after litellm's 2-3 s import (see
``pytest_agentclinic/llm/preflight.py``). Run it after raising litellm's version pin:

    python tools/litellm_names.py
"""

from __future__ import annotations

import json
import os
from pathlib import Path

OUT = Path(__file__).parent.parent / "pytest_agentclinic" / "llm" / "data" / "litellm_names.json"


def main() -> None:
    """Write the file (sorted, one entry a line: small diffs between litellm versions)."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # the shipped table
    import litellm

    providers = sorted(str(getattr(p, "value", p)) for p in litellm.provider_list)
    models = {name: str(entry.get("litellm_provider", ""))
              for name, entry in sorted(litellm.model_cost.items())
              if "/" not in name and name != "sample_spec"}
    from importlib.metadata import version

    data = {"litellm": version("litellm"),
            "providers": providers, "models": models}
    OUT.write_text(json.dumps(data, indent=0, sort_keys=True) + "\n", encoding="utf-8")
    print(f"{OUT}: {len(providers)} providers, {len(models)} bare model names")


if __name__ == "__main__":
    main()
