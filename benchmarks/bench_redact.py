"""redact() on hostile 10 MB texts: CPU seconds each (goal: under 1 s); and a transcript
redacted as a model against the old way (dumped to JSON, redacted, parsed back).

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

from pytest_agentclinic.core.redact import redact, register
from pytest_agentclinic.core.redact_model import redact_model
from pytest_agentclinic.core.transcript import Transcript, Usage, Utterance

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


def transcript(utterances: int = 40, secret: str | None = None) -> Transcript:
    """An encounter of ``utterances`` clinical messages (~300 characters each); with
    ``secret``, one message quotes it."""
    text = ("The patient reports a pruritic, scaly rash on the extensor surfaces of both "
            "elbows and knees for three months, worse in winter, with nail pitting and a "
            "family history of similar lesions; no fever, weight loss or joint swelling. ")
    said = [Utterance(turn=i // 2 + 1, role="doctor" if i % 2 == 0 else "patient",
                      kind="question" if i % 2 == 0 else "answer",
                      text=text + (secret if secret and i == utterances // 2 else ""),
                      model="gpt-4o", usage=Usage(calls=1, prompt_tokens=900 + i))
            for i in range(utterances)]
    return Transcript(protocol="agentclinic", case_id="derm-01", dataset="bench",
                      specialty="Dermatology", models={"doctor": "gpt-4o", "patient": "gpt-4o"},
                      sample=0, turn_budget=20, utterances=said, diagnosis="Psoriasis",
                      outcome="correct")


def by_json(t: Transcript) -> Transcript:
    """The old way: dumped to JSON, redacted as text, parsed back."""
    return Transcript.model_validate_json(redact(t.model_dump_json()))


def transcripts(rounds: int = 7, per_round: int = 200) -> None:
    """CPU per transcript, the old way and as a model, interleaved rounds; their medians."""
    secret = "sk-bench-Secret-0123456789"
    register(secret)
    for name, t in (("no secret", transcript()), ("one secret", transcript(secret=secret))):
        old: list[float] = []
        new: list[float] = []
        for _ in range(rounds):
            for way, times in ((by_json, old), (redact_model, new)):
                started = time.process_time()
                for _ in range(per_round):
                    way(t)
                times.append((time.process_time() - started) / per_round)
        o, n = statistics.median(old), statistics.median(new)
        print(f"transcript of 40 messages, {name}: JSON round trip {o * 1e6:.0f} us, "
              f"as a model {n * 1e6:.0f} us (round trip / model: x{o / n:.2f})")


def main() -> None:
    print(f"{'input':<26} {'MB':>5} {'CPU s':>7}")
    for name, text in SHAPES.items():
        print(f"{name:<26} {len(text) / 1e6:>5.1f} {cpu(functools.partial(redact, text)):>7.3f}")
    small = "a" * 40_000
    old = cpu(lambda: _OLD_USERINFO.sub("", small), repeats=1)
    new = cpu(lambda: redact(small))
    print(f"40k letters: old userinfo pattern {old:.2f} s, redact() now {new:.4f} s "
          f"(x{old / max(new, 1e-6):,.0f})")
    transcripts()


if __name__ == "__main__":
    main()
