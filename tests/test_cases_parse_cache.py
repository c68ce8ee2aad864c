"""A case file is parsed once for all the run's processes (pytest_agentclinic.cases.parse_cache)."""

from __future__ import annotations

import json
import multiprocessing as mp
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers import SHARED, make_case

from pytest_agentclinic.cases import loaders, parse_cache
from pytest_agentclinic.plugin.scheduling import PARSE_AHEAD_BYTES, parse_ahead

ROOT = Path(__file__).resolve().parents[1]


def _same(a: loaders.LoadedFile, b: loaders.LoadedFile) -> None:
    assert (a.format, a.not_cases, a.damaged, a.positions) == (
        b.format, b.not_cases, b.damaged, b.positions)
    assert a.errors == b.errors and a.sidecar_error == b.sidecar_error
    assert [line for line, _ in a.cases] == [line for line, _ in b.cases]
    for (_, x), (_, y) in zip(a.cases, b.cases, strict=True):
        assert x == y
        assert x.model_dump(exclude_unset=True) == y.model_dump(exclude_unset=True)


def _files() -> list[Path]:
    files = sorted((ROOT / "cases").glob("*.yaml")) + sorted(
        (ROOT / "tests" / "fixtures").glob("*.y*ml"))
    files += sorted(p for p in (SHARED / "agentclinic").glob("*.jsonl"))[:2]
    return files


@pytest.mark.parametrize("path", _files(), ids=lambda p: p.name)
def test_a_stored_load_equals_the_parse(path: Path, tmp_path: Path) -> None:
    first = parse_cache.load(path, tmp_path)
    stored = list((tmp_path / parse_cache.FOLDER).glob("*.jsonl"))
    assert len(stored) == 1
    again = parse_cache.load(path, tmp_path)
    _same(loaders.load_case_file(path), first)
    _same(first, again)


def _written(tmp_path: Path, n: int = 3, **extra: object) -> Path:
    path = tmp_path / "c.yaml"
    cases = [make_case(i) for i in range(n)]
    cases.append({"id": "bad", "objective": "x"})  # no diagnosis: an error, kept as one
    path.write_text(yaml.safe_dump({"dataset": "d", "cases": cases, **extra}))
    return path


def test_errors_and_lines_survive_the_store(tmp_path: Path) -> None:
    path = _written(tmp_path)
    parse_cache.load(path, tmp_path / "cache")
    again = parse_cache.load(path, tmp_path / "cache")
    assert [str(e.path) for e in again.errors] == [str(path)]
    assert again.errors[0].field == "patient"  # the first missing field
    _same(loaders.load_case_file(path), again)


def test_a_changed_file_or_sidecar_is_parsed_again(tmp_path: Path) -> None:
    path = _written(tmp_path, 2)
    cache = tmp_path / "cache"
    assert len(parse_cache.load(path, cache).cases) == 2
    path.write_text(yaml.safe_dump({"dataset": "d", "cases": [make_case(i) for i in range(5)]}))
    assert len(parse_cache.load(path, cache).cases) == 5
    sidecar = tmp_path / f"c{loaders.SIDECAR_SUFFIX}"
    sidecar.write_text(json.dumps({"cases": {"0": {"specialty": "Neurology"}}}))
    assert parse_cache.load(path, cache).cases[0][1].specialty == "Neurology"
    # One entry a case file: an earlier version's is removed.
    assert len(list((cache / parse_cache.FOLDER).glob("*.jsonl"))) == 1
    (tmp_path / "elsewhere").mkdir()
    other = _written(tmp_path / "elsewhere", 2)
    parse_cache.load(other, cache)
    assert len(list((cache / parse_cache.FOLDER).glob("*.jsonl"))) == 2


def test_a_damaged_entry_is_ignored_and_rewritten(tmp_path: Path) -> None:
    path = _written(tmp_path)
    cache = tmp_path / "cache"
    parse_cache.load(path, cache)
    (entry,) = (cache / parse_cache.FOLDER).glob("*.jsonl")
    entry.write_text('{"version": 1, "format": "project", "lines": [1, 2]}\n{"id": ')
    _same(loaders.load_case_file(path), parse_cache.load(path, cache))
    _same(loaders.load_case_file(path), parse_cache.load(path, cache))
    assert entry.read_text().count("\n") == 5  # header, names and three cases, written anew


def _count_parses(path: str, cache: str, queue: object) -> None:
    calls = []
    original = loaders.load_case_file

    def counted(p: Path, **kwargs: bool) -> loaders.LoadedFile:
        calls.append(p)
        return original(p, **kwargs)

    setattr(parse_cache, "load_case_file", counted)  # noqa: B010 (a child process)
    loaded = parse_cache.load(Path(path), Path(cache))
    queue.put((len(calls), len(loaded.cases)))  # type: ignore[attr-defined]


def test_processes_sharing_a_cache_parse_the_file_once(tmp_path: Path) -> None:
    path = _written(tmp_path, 300)
    ctx = mp.get_context("fork")
    queue = ctx.Queue()
    workers = [ctx.Process(target=_count_parses, args=(str(path), str(tmp_path / "c"), queue))
               for _ in range(4)]
    for w in workers:
        w.start()
    results = [queue.get(timeout=120) for _ in workers]
    for w in workers:
        w.join()
    assert sorted(parses for parses, _ in results) == [0, 0, 0, 1]
    assert {cases for _, cases in results} == {300}


def test_an_unwritable_cache_still_loads(tmp_path: Path) -> None:
    path = _written(tmp_path)
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    _same(loaders.load_case_file(path), parse_cache.load(path, blocker))


WAIT_FOR_PARSE = '''
import json, os, time
from pathlib import Path

import pytest


@pytest.hookimpl(tryfirst=True)
def pytest_collection(session):
    # Before this worker collects: is the case file parsed (or its parse under way)?
    if not hasattr(session.config, "workerinput"):
        return
    folder = Path(str(session.config.rootpath)) / ".agentclinic_cache" / "parsed-cases"
    deadline = time.monotonic() + 15
    while not list(folder.glob("*.jsonl")) and time.monotonic() < deadline:
        time.sleep(0.05)
    (Path(str(session.config.rootpath)) / f"seen-{os.getpid()}.json").write_text(
        json.dumps(bool(list(folder.glob("*.jsonl")))))
'''


def _worth_parsing_ahead(path: Path) -> Path:
    """Three cases in a file of :data:`~pytest_agentclinic.plugin.scheduling.PARSE_AHEAD_BYTES`
    (a YAML comment fills it): the size a parse ahead of the workers is started for."""
    from helpers import write_yaml_cases

    write_yaml_cases(path, [make_case(i) for i in range(1, 4)])
    line = "# " + "x" * 1022 + "\n"
    with path.open("a") as f:
        f.write(line * (PARSE_AHEAD_BYTES // len(line) + 1))
    return path


def test_a_small_file_is_left_to_the_first_worker(tmp_path: Path) -> None:
    """Below the size a process is worth starting for, no parse runs ahead; from it, one
    does (the runs below check what it does)."""
    path = _written(tmp_path)
    assert parse_ahead([str(path)], tmp_path / "cache") is None
    process = parse_ahead([str(_worth_parsing_ahead(tmp_path / "big.yaml"))],
                          tmp_path / "cache")
    assert process is not None
    assert process.wait(timeout=60) == 0


def test_under_xdist_the_controller_parses_while_the_workers_start(
        pytester: pytest.Pytester) -> None:
    """xdist only (the point of the test): without workers the one process parses as it
    collects."""
    pytester.makeconftest(WAIT_FOR_PARSE)
    _worth_parsing_ahead(pytester.path / "c.yaml")
    result = pytester.runpytest_subprocess("c.yaml", "-n", "2", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=3)
    seen = [json.loads(p.read_text()) for p in pytester.path.glob("seen-*.json")]
    assert seen == [True, True]


NO_PARSE_IN_THE_CONTROLLER = WAIT_FOR_PARSE + '''

from pytest_agentclinic.cases import parse_cache


def pytest_configure(config):
    if hasattr(config, "workerinput"):
        return
    parse = parse_cache.load_case_file

    def parsed_here(path, **kwargs):
        (Path(str(config.rootpath)) / "parsed-by-the-controller").write_text(str(path))
        return parse(path, **kwargs)

    parse_cache.load_case_file = parsed_here
'''


def test_under_xdist_the_parse_runs_beside_the_controller_not_in_it(
        pytester: pytest.Pytester) -> None:
    """xdist only, as above. A thread of the controller parsed the files while the
    controller started its workers, one after the other: both needed the interpreter's
    lock, and the last of 8 workers started 1.5-4 s later on a loaded machine."""
    pytester.makeconftest(NO_PARSE_IN_THE_CONTROLLER)
    _worth_parsing_ahead(pytester.path / "c.yaml")
    result = pytester.runpytest_subprocess("c.yaml", "-n", "2", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=3)
    assert [json.loads(p.read_text()) for p in pytester.path.glob("seen-*.json")] == [True] * 2
    assert not (pytester.path / "parsed-by-the-controller").exists()


# --- light items: a case's stored text, its model built when the item plays ----------------

def test_the_stored_texts_are_the_cases(tmp_path: Path) -> None:
    from pytest_agentclinic.core.case import Case

    path = _written(tmp_path, n=4)
    for loaded in (parse_cache.load(path, tmp_path / "cache"),  # parsed and written
                   parse_cache.load(path, tmp_path / "cache")):  # read back
        assert len(loaded.texts) == len(loaded.cases) == 4
        for text, (_, case) in zip(loaded.texts, loaded.cases, strict=True):
            back = Case.model_validate_json(text)
            assert back == case
            assert back.model_dump(exclude_unset=True) == case.model_dump(exclude_unset=True)
    assert loaders.load_case_file(path).texts == []  # no store, no texts: items hold models


LIGHT_PROBE = '''
import json, os
from pathlib import Path

from pytest_agentclinic.plugin.item import EncounterItem


def pytest_collection_finish(session):
    items = [i for i in session.items if isinstance(i, EncounterItem)]
    light = [i for i in items if i._spec is None and i._light is not None]
    (Path(str(session.config.rootpath)) / f"light-{os.getpid()}.json").write_text(
        json.dumps([len(items), len(light)]))


def pytest_runtest_call(item):
    if isinstance(item, EncounterItem):
        case = item.spec.case  # built from the stored text as the item plays
        assert (case.dataset, case.id) == item.case_key and case.specialty == item.specialty
'''


def test_items_hold_their_case_as_text_and_bad_records_still_name_file_and_line(
        pytester: pytest.Pytester, xdist: list[str]) -> None:
    from helpers import write_yaml_cases

    pytester.makeconftest(LIGHT_PROBE)
    cases = [make_case(i) for i in range(1, 4)]
    cases.insert(1, {"id": "bad", "objective": "x", "patient": {"history": "h"}})
    write_yaml_cases(pytester.path / "c.yaml", cases)
    result = pytester.runpytest_subprocess("c.yaml", "-p", "no:cacheprovider", *xdist)
    result.assert_outcomes(passed=3, errors=1)
    bad_line = next(n for n, line in enumerate(
        (pytester.path / "c.yaml").read_text().splitlines(), 1) if "id: bad" in line)
    result.stdout.fnmatch_lines([f"*c.yaml:{bad_line}*diagnosis*"])
    seen = [json.loads(p.read_text()) for p in pytester.path.glob("light-*.json")]
    # Every item light; under -n 2 the workers split the cases (each holds its share).
    assert seen and all(items == light for items, light in seen)
    assert sum(items for items, _light in seen) == 3


# --- read back undecoded: a split xdist worker decodes its share only ----------------------

def test_a_stored_read_back_decodes_no_case_until_asked(tmp_path: Path) -> None:
    path = _written(tmp_path, n=5)
    parsed = parse_cache.load(path, tmp_path / "cache", stored=True)
    assert parsed.stored is None and len(parsed.cases) == 5  # parsed here: decoded as ever
    back = parse_cache.load(path, tmp_path / "cache", stored=True)
    stored = back.stored
    assert stored is not None and back.cases == [] and back.texts == []
    _same(parsed, loaders.LoadedFile(path=back.path, format=back.format,
                                     cases=list(zip(stored.lines, stored, strict=True)),
                                     errors=back.errors, positions=back.positions))
    assert stored[-1] == stored[4] == parsed.cases[4][1] and stored[1:3] == list(stored)[1:3]
    assert [stored.text(i) for i in range(5)] == parsed.texts
    assert stored.markers == {parsed.cases[0][1].specialty_marker: parsed.cases[0][1].specialty}
    with pytest.raises(IndexError):
        stored[5]
    asked: list[tuple[str, str]] = []

    def takes(dataset: str, case_id: str) -> bool:
        asked.append((dataset, case_id))
        return case_id.endswith(("1", "3"))

    chosen = stored.choose(takes)
    assert asked == [(c.dataset, c.id) for _, c in parsed.cases]  # every case, in order
    assert chosen == [1, 3]
    assert stored[1] is stored[1] and stored[0] is not stored[0]  # kept, or made anew


def test_a_choice_by_position_decodes_no_name(tmp_path: Path) -> None:
    # The header holds no case's name (nor its position): a worker dealt its share by
    # position reads the names' line as bytes and never decodes it.
    path = _written(tmp_path, n=4)
    parsed = parse_cache.load(path, tmp_path / "cache")
    (entry,) = (tmp_path / "cache" / parse_cache.FOLDER).glob("*.jsonl")
    header, names, *_cases = entry.read_text().splitlines()
    assert not any(case.id in header for _line, case in parsed.cases)
    assert json.loads(names) == [[c.dataset, c.id] for _line, c in parsed.cases]
    entry.write_text("\n".join([header, "[not JSON]", *_cases]) + "\n")  # fails if decoded
    stored = parse_cache.load(path, tmp_path / "cache", stored=True, names=False).stored
    assert stored is not None
    turn = iter([False, True, False, True])
    assert stored.choose(dealt=lambda: next(turn)) == [1, 3]
    assert stored[1] == parsed.cases[1][1] and stored[1] is stored[1]
    with pytest.raises(TypeError):
        stored.choose()
    with pytest.raises(TypeError):  # by names, which were not read back
        stored.choose(lambda _d, _i: True)
    # Read back with the names, the damaged line is seen: the file is parsed anew.
    again = parse_cache.load(path, tmp_path / "cache", stored=True)
    assert again.stored is None and len(again.cases) == 4


@pytest.mark.parametrize("damage", [
    lambda names: json.dumps(json.loads(names)[:2]),  # one case's name missing
    lambda _names: '{"a": 1}',  # no list
    lambda _names: '[["only a dataset"], ["x"], ["y"]]',  # no [dataset, id] pairs
], ids=["short", "no-list", "no-pairs"])
def test_a_damaged_names_line_is_parsed_anew(tmp_path: Path, damage: Any) -> None:
    path = _written(tmp_path, n=3)
    parse_cache.load(path, tmp_path / "cache")
    (entry,) = (tmp_path / "cache" / parse_cache.FOLDER).glob("*.jsonl")
    header, names, *cases = entry.read_text().splitlines()
    entry.write_text("\n".join([header, damage(names), *cases]) + "\n")
    back = parse_cache.load(path, tmp_path / "cache", stored=True)
    assert back.stored is None and len(back.cases) == 3  # parsed anew, not read back


def test_a_stored_entry_not_matching_its_header_is_parsed_anew(tmp_path: Path) -> None:
    path = _written(tmp_path, n=3)
    parse_cache.load(path, tmp_path / "cache")
    (entry,) = (tmp_path / "cache" / parse_cache.FOLDER).glob("*.jsonl")
    header, *cases = entry.read_text().splitlines()
    entry.write_text("\n".join([header, *cases[:-1]]) + "\n")  # a case short
    again = parse_cache.load(path, tmp_path / "cache", stored=True)
    assert again.stored is None and len(again.cases) == 3
    assert parse_cache.load(path, tmp_path / "cache", stored=True).stored is not None


def test_a_stored_entry_with_a_cut_case_is_parsed_anew(tmp_path: Path) -> None:
    # Read back undecoded, a case is decoded only when read: a damaged line must be found
    # before (it was a collection error of the worker that read it).
    path = _written(tmp_path, n=3)
    parse_cache.load(path, tmp_path / "cache")
    (entry,) = (tmp_path / "cache" / parse_cache.FOLDER).glob("*.jsonl")
    header, first, *rest = entry.read_text().splitlines()
    entry.write_text("\n".join([header, first[: len(first) // 2], *rest]) + "\n")
    again = parse_cache.load(path, tmp_path / "cache", stored=True)
    assert again.stored is None and len(again.cases) == 3
    stored = parse_cache.load(path, tmp_path / "cache", stored=True).stored
    assert stored is not None and list(stored) == [case for _, case in again.cases]


# --- models let go once the items are made share nothing ----------------------------------

SHARE_PROBE = '''
import json, os
from pathlib import Path

from pytest_agentclinic.core import case, heap

shared = []
markers = []


def pytest_configure(config):
    share, slugify = heap.FrozenParts.share, case.slugify

    def counted(self, model, depth=0):
        if depth == 0:
            shared.append(type(model).__name__)
        return share(self, model, depth)

    def marker(text, sep="-"):
        if sep == "_":  # Case.specialty_marker's
            markers.append(text)
        return slugify(text, sep)

    heap.FrozenParts.share, case.slugify = counted, marker


def pytest_collection_finish(session):
    (Path(str(session.config.rootpath)) / f"shared-{os.getpid()}.json").write_text(
        json.dumps([len(session.items), shared.count("Case"), len(markers)]))
'''


def test_cases_whose_items_keep_their_text_are_not_shared(
        pytester: pytest.Pytester, xdist: list[str]) -> None:
    """Sharing every equal part of a case (its strings, its sets of given fields) is worth
    its CPU only while the model is held; an item of a light protocol holds the case's text
    and the models are let go once the items are made. Sharing them all cost ~35 ms of a
    collection's CPU at 4,000 cases, parsed or read back (before: one share a case, in each
    process that collected); their sets of given fields alone are shared now
    (``stored.GivenFields``, not counted here)."""
    from helpers import write_yaml_cases

    pytester.makeconftest(SHARE_PROBE)
    write_yaml_cases(pytester.path / "c.yaml", [make_case(i) for i in range(1, 9)])
    for _parsed_then_read_back in range(2):
        result = pytester.runpytest_subprocess("c.yaml", "-p", "no:cacheprovider", *xdist)
        result.assert_outcomes(passed=8)
        seen = [json.loads(p.read_text()) for p in pytester.path.glob("shared-*.json")]
        assert sum(items for items, _shared, _markers in seen) >= 8
        assert [shared for _items, shared, _markers in seen] == [0] * len(seen)
        # One specialty: its marker is worked out once where a collection asks for it (the
        # file's markers, the items', the store's header), not once a case in each (before:
        # 2-3 a case). The parse and the store's header are in this process without xdist.
        assert all(markers <= 3 for _items, _shared, markers in seen)
        for probe in pytester.path.glob("shared-*.json"):
            probe.unlink()


def test_cases_kept_as_models_still_share_their_parts(tmp_path: Path) -> None:
    path = _written(tmp_path, n=3)
    for kept in (parse_cache.load(path, tmp_path / "cache"),  # parsed and written
                 parse_cache.load(path, tmp_path / "cache")):  # read back
        (_, a), (_, b), _rest = kept.cases
        assert a.__pydantic_fields_set__ is b.__pydantic_fields_set__
        assert a.patient.demographics is b.patient.demographics
    stored = parse_cache.load(path, tmp_path / "cache", stored=True).stored
    assert stored is not None and stored.choose(lambda _d, _i: True) == [0, 1, 2]
    assert stored[0].__pydantic_fields_set__ is stored[1].__pydantic_fields_set__
    # Models let go once the items are made share their sets of given fields only (the most
    # of the memory for the least of the CPU; without them the models' peak set a
    # collection's memory), whether parsed or read back.
    parsed, back = (parse_cache.load(path, tmp_path / "other", models_kept=False)
                    for _ in range(2))
    for texts_only in (parsed, back):
        (_, a), (_, b), _rest = texts_only.cases
        assert a == kept.cases[0][1] and len(texts_only.texts) == 3
        assert a.__pydantic_fields_set__ is b.__pydantic_fields_set__
        assert a.patient.__pydantic_fields_set__ is b.patient.__pydantic_fields_set__
