"""What the items of a case file hold in common, held once (issue 37: memory per item).

A light item keeps its case's stored text and the rest of its spec (label, models, sample,
budget, candidates, variant). Each spec came with a dict of models and a variant of its own:
~0.4 KB an item with the tuple, for values the items of one label all share.
"""

from __future__ import annotations

import json

import pytest
from helpers import make_case, write_yaml_cases

HOLDS = """
import json

def pytest_collection_modifyitems(session, config, items):
    from pytest_agentclinic.plugin.item import EncounterItem

    name = getattr(config, "workerinput", {}).get("workerid", "main")
    encounters = [i for i in items if isinstance(i, EncounterItem)]
    rests = [i._light[1] for i in encounters if i._light is not None]
    with open(f"holds-{name}.json", "w") as out:
        json.dump({"items": len(encounters), "light": len(rests),
                   "labels": len({r[0] for r in rests}),
                   "rests": len({id(r) for r in rests}),
                   "models": len({id(r[1]) for r in rests}),
                   "specs": [str(i.spec.models) + i.spec.label + str(i.spec.variant)
                             for i in encounters]}, out)
"""


def test_the_items_of_a_label_share_the_rest_of_their_spec(pytester: pytest.Pytester,
                                                           xdist: list[str]) -> None:
    cases = ([make_case(i, "Dermatology") for i in range(1, 7)]
             + [make_case(i, "Neurology") for i in range(7, 10)])
    write_yaml_cases(pytester.path / "c.yaml", cases)
    pytester.makeconftest(HOLDS)
    result = pytester.runpytest("c.yaml", "-p", "no:cacheprovider", "--collect-only",
                                "--agent-bias=none,patient:recency", *xdist)
    assert result.ret == 0
    seen = [json.loads(p.read_text()) for p in pytester.path.glob("holds-*.json")]
    assert seen
    for holds in seen:
        assert holds["items"] and holds["light"] == holds["items"]
        # Two specialties x two biases: four labels, one tuple and one dict of models each.
        assert holds["rests"] == holds["labels"] <= 4
        assert holds["models"] <= holds["labels"]
        assert any("recency" in spec for spec in holds["specs"])
        assert any("recency" not in spec for spec in holds["specs"])


def test_freezing_the_collected_heap_does_not_walk_all_of_it() -> None:
    """The heap is frozen once collected; freeing what collection let go of first took a
    full collection (25-45 ms a process, every xdist worker's), where the young
    generations hold it."""
    import gc

    from pytest_agentclinic.plugin.item_memory import FreezeCollected

    started: list[int] = []

    def watch(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            started.append(info["generation"])

    class Cycle:
        def __init__(self) -> None:
            self.me = self

    gone = Cycle()
    del gone  # garbage only a collection frees
    gc.callbacks.append(watch)
    try:
        FreezeCollected().pytest_collection_finish(session=None)  # type: ignore[arg-type]
        frozen = gc.get_freeze_count()
    finally:
        gc.callbacks.remove(watch)
        gc.unfreeze()
    assert frozen > 0
    assert 2 not in started
    assert not [o for o in gc.get_objects() if type(o) is Cycle]
