"""Test prices, each encounter's spend in its record, and --agent-test-budget refusals."""

from __future__ import annotations

import asyncio
import csv
from pathlib import Path

import pytest
from helpers import make_case, results, write_yaml_cases

from pytest_agentclinic.agents.spend_budget import BudgetedMeasurement
from pytest_agentclinic.core.case import Case
from pytest_agentclinic.core.roles import Reply, TurnView
from pytest_agentclinic.metrics import prices
from pytest_agentclinic.metrics.prices import REFUSED, PriceTable, default_prices

pytestmark = pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")

TABLE = Path(prices.__file__).parent / "data" / "test_prices.csv"


def test_every_price_names_its_public_source() -> None:
    lines = [line for line in TABLE.read_text().splitlines() if not line.startswith("#")]
    rows = list(csv.DictReader(lines))
    assert len(rows) >= 30
    header = TABLE.read_text().split("test,aliases")[0]
    for tag in ("CLFS-2024", "PFS-2024"):
        assert f"{tag} = CMS" in header  # each source tag is spelt out with its year
    for row in rows:
        assert row["source"] in ("CLFS-2024", "PFS-2024", "included") or \
            row["test"] == "unlisted test", row
        assert float(row["usd"]) == round(float(row["usd"]))  # no invented cents


@pytest.mark.parametrize(("request_text", "test", "usd"), [
    ("CBC", "complete blood count", 8), ("Complete blood count with differential",
                                         "complete blood count", 8),
    ("Skin biopsy of the lesion", "skin biopsy", 170), ("Physical examination", "physical "
                                                        "examination", 0),
    ("Blood culture", "blood culture", 10), ("KOH prep", "potassium hydroxide preparation", 4),
])
def test_requests_find_their_row(request_text: str, test: str, usd: float) -> None:
    row = default_prices().lookup(request_text)
    assert row is not None and (row.test, row.usd) == (test, usd)


def test_an_unknown_test_costs_the_unlisted_price_and_is_listed() -> None:
    total, unpriced = default_prices().spend(["Tzanck smear", "CBC"])
    assert (total, unpriced) == (20 + 8, ["Tzanck smear"])


def test_a_bad_price_row_names_file_line_and_field(tmp_path: Path) -> None:
    path = tmp_path / "p.csv"
    path.write_text("# note\ntest,aliases,cpt,usd,source\ncbc,,85025,eight,CLFS-2024\n")
    with pytest.raises(ValueError, match=r"p.csv:3: field 'usd': not a number"):
        PriceTable.read(path)


class _Lab:
    model, prompt_version = "lab", "1"

    def __init__(self) -> None:
        self.asked = 0

    async def respond(self, view: TurnView) -> Reply:
        self.asked += 1
        return Reply("RESULTS: fine")


def test_budget_refuses_a_test_that_would_exceed_it_without_asking_the_agent() -> None:
    case = Case.model_validate({**make_case(1), "dataset": "t"})
    lab = _Lab()
    budgeted = BudgetedMeasurement(lab, 20.0)

    def ask(text: str) -> str:
        return asyncio.run(budgeted.respond(TurnView(case, (), text, 5, 10, 0))).text

    assert ask("REQUEST TEST: CBC") == "RESULTS: fine"  # $8
    assert ask("REQUEST TEST: Lipid panel").startswith(REFUSED)  # $13 more would be $21
    assert ask("REQUEST TEST: Physical examination") == "RESULTS: fine"  # free
    assert ask("REQUEST TEST: Urinalysis") == "RESULTS: fine"  # $3 -> $11
    assert lab.asked == 3 and budgeted.spent == 11


def test_spend_is_in_every_record_and_the_budget_caps_it(pytester: pytest.Pytester,
                                                         xdist: list[str]) -> None:
    write_yaml_cases(pytester.path / "c.yaml", [make_case(1), make_case(2)])
    pytester.runpytest("c.yaml", "--agent-run-name", "free", *xdist)
    free = results(pytester.path)
    spend = [r["measures"]["test_spend_usd"] for r in free.values()]
    assert all(s > 30 for s in spend)
    for old in (pytester.path / "reports").iterdir():
        old.rename(pytester.path / f"old-{old.name}")
    pytester.runpytest("c.yaml", "--agent-test-budget", "30", *xdist)
    capped = results(pytester.path)
    for r in capped.values():
        m = r["measures"]
        assert m["test_spend_usd"] <= 30 and m["tests_refused"] >= 1
        assert m["version"] == 1 and m["method"] == "elicit-1"


def test_a_bad_budget_is_a_usage_error(pytester: pytest.Pytester, xdist: list[str]) -> None:
    write_yaml_cases(pytester.path / "c.yaml", [make_case(1)])
    result = pytester.runpytest("c.yaml", "--agent-test-budget", "cheap", *xdist)
    result.stderr.fnmatch_lines(["*--agent-test-budget: expected a number >= 0, got 'cheap'*"])
    assert result.ret == pytest.ExitCode.USAGE_ERROR


def test_the_budget_has_an_ini_twin(pytester: pytest.Pytester, xdist: list[str]) -> None:
    write_yaml_cases(pytester.path / "c.yaml", [make_case(1)])
    pytester.makeini("[pytest]\nagent_test_budget = 12\n")
    pytester.runpytest("c.yaml", *xdist)
    (record,) = results(pytester.path).values()
    assert record["measures"]["test_spend_usd"] <= 12 and record["measures"]["tests_refused"]
