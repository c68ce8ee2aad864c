"""Image delivery (initial / on request), patient perception, and the variant axes."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable

import pytest
from helpers import llm_args, make_case, results, write_yaml_cases

from pytest_agentclinic.protocols.perception import parse
from pytest_agentclinic.testing.fake_server import FakeOpenAIServer, FakeReply, FakeRequest, Script

Start = Callable[[Script], FakeOpenAIServer]
PNG = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8/5+hHgAHggJ/"
                       "PchI7wAAAABJRU5ErkJggg==")


@pytest.fixture
def image_case(pytester: pytest.Pytester) -> pytest.Pytester:
    (pytester.path / "lesion.png").write_bytes(PNG)
    write_yaml_cases(pytester.path / "c.yaml", [
        make_case(1, images=[{"path": "lesion.png", "caption": "photo"}]),
        make_case(2, images=[{"url": "https://example.invalid/x.png"}]),
        make_case(3)])
    return pytester


def doctor_asks_for_images(req: FakeRequest) -> FakeReply:
    if req.doctor_turn == 0 and "REQUEST IMAGES" in req.system:
        return FakeReply("REQUEST IMAGES")
    return FakeReply("DIAGNOSIS READY: Condition1 disease")


def parts(message: dict[str, object]) -> list[str]:
    content = message["content"]
    assert isinstance(content, list)
    return [p["image_url"]["url"] if p["type"] == "image_url" else "text" for p in content]


def test_initial_mode_sends_images_with_the_first_message(image_case: pytest.Pytester,
                                                          fake_server: Start,
                                                          xdist: list[str]) -> None:
    server = fake_server(doctor_asks_for_images)
    result = image_case.runpytest("c.yaml", *llm_args(server, ("doctor",)), *xdist)
    result.assert_outcomes(passed=1, failed=2)
    by_case = {r.system.split("complaint ")[1][0]: r for r in server.requests}
    local = parts(by_case["1"].messages[1])
    assert local[0] == "text" and local[1] == "data:image/png;base64," + base64.b64encode(
        PNG).decode()
    assert parts(by_case["2"].messages[1]) == ["text", "https://example.invalid/x.png"]
    assert isinstance(by_case["3"].messages[1]["content"], str)  # no images, plain text
    assert all("REQUEST IMAGES" not in r.system for r in server.requests)
    modes = {r["case_id"]: r["image_mode"] for r in results(image_case.path).values()}
    assert modes == {"t-01": "initial", "t-02": "initial", "t-03": None}


def test_request_mode_sends_images_only_when_asked(image_case: pytest.Pytester,
                                                   fake_server: Start, xdist: list[str]) -> None:
    server = fake_server(doctor_asks_for_images)
    image_case.runpytest("c.yaml", "--agent-images=request", *llm_args(server, ("doctor",)), *xdist)
    first = [r for r in server.requests if "complaint 1" in r.system]
    assert len(first) == 2 and isinstance(first[0].messages[1]["content"], str)
    assert parts(first[1].messages[-1])[1].startswith("data:image/png;base64,")
    assert "attached" in json.dumps(first[1].messages[-1])
    records = {r["case_id"]: r for r in results(image_case.path).values()}
    assert records["t-01"]["image_requested_turn"] == 1
    assert records["t-03"]["image_requested_turn"] is None  # no images to offer


def test_an_image_that_cannot_be_loaded_is_an_error_naming_it(pytester: pytest.Pytester,
                                                              fake_server: Start,
                                                              xdist: list[str]) -> None:
    write_yaml_cases(pytester.path / "c.yaml", [make_case(1, images=[{"path": "gone.png"}])])
    server = fake_server(doctor_asks_for_images)
    result = pytester.runpytest("c.yaml", *llm_args(server, ("doctor",)), *xdist)
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines([f"*cannot load image {pytester.path}/gone.png*"])
    assert server.calls == 0


def test_both_image_modes_are_variants_and_the_offline_doctor_asks(
        image_case: pytest.Pytester, xdist: list[str]) -> None:
    result = image_case.runpytest("c.yaml", "--agent-images=initial", "--agent-images=request",
                                  "-p", "no:cacheprovider", *xdist)
    outcomes = result.parseoutcomes()
    assert outcomes.get("passed", 0) + outcomes.get("failed", 0) == 5  # 2 + 2 + 1
    records = results(image_case.path)
    assert "c.yaml::t-01[dermatology-offline-img_request]" in records
    asked = {(r["case_id"], r["image_mode"]): r["image_requested_turn"] for r in records.values()}
    assert asked[("t-01", "request")] == 8 and asked[("t-01", "initial")] is None


def test_patient_models_multiply_items_and_are_recorded(pytester: pytest.Pytester,
                                                        fake_server: Start,
                                                        xdist: list[str]) -> None:
    write_yaml_cases(pytester.path / "c.yaml", [make_case(1)])
    server = fake_server(lambda req: FakeReply("It itches."))
    result = pytester.runpytest("c.yaml", "--agent-patient=offline", "--agent-patient=openai/pt",
                                *llm_args(server, ()), *xdist)
    result.assert_outcomes(passed=2)
    pairs = sorted((r["models"]["doctor"], r["models"]["patient"])
                   for r in results(pytester.path).values())
    assert pairs == [("offline", "offline"), ("offline", "openai/pt")]
    result.stdout.fnmatch_lines(["agentclinic: doctor=offline, patient=offline, openai/pt, *"])


@pytest.mark.parametrize(("text", "expected"), [
    ("Confidence: 7\nCompliance: 8/10\nConsultation: 9", (7, 8, 9)),
    ("**Confidence** - 10. Compliance: 0. Consultation: 6.5", (10, None, None)),
    ("My confidence is 6; I would not consult again.", (6, None, None)),
    ("7, 8, 9", (None, None, None)),  # unlabelled numbers are never assigned
])
def test_perception_ratings_are_parsed_without_guessing(text: str,
                                                        expected: tuple[int | None, ...]) -> None:
    p = parse(text)
    assert (p.confidence, p.compliance, p.consultation) == expected


def test_no_perception_when_disabled(pytester: pytest.Pytester, xdist: list[str]) -> None:
    write_yaml_cases(pytester.path / "c.yaml", [make_case(1)])
    pytester.runpytest("c.yaml", "--agent-perception=no", "-p", "no:cacheprovider", *xdist)
    (record,) = results(pytester.path).values()
    assert record["perception"] is None
