"""Style invariance: the recorded answers rewritten as other doctor models write them.

Issue 31 measures the grader on other models' answers, which wrap a diagnosis in prose,
markdown, tags and notes that GPT-4 and GPT-3.5 seldom write. This benchmark takes the
recorded free-response answers of CRAFT-MD's GPT-4 and GPT-3.5 runs that are a name alone
(one line, no "diagnosis"/"likely"/"possible"/"suspect" words: the answer as the model
gave it), writes each in every style below ("Based on the clinical findings, X.",
"X (confidence: high)", "**Most Likely Diagnosis:** X" followed by sections, ...), and
counts, per style and policy, the answers whose verdict differs from the bare answer's.
The style adds no diagnosis, so every change is a reading fault. Printed, measured in one
run: the changes per style out of the answers read, and up to ``--examples`` of them.

    python benchmarks/bench_styles.py [--datasets ../shared/datasets] [--fold A|B|all]
        [--sample 3000] [--policy strict|paper|both] [--examples 3]

The sample is drawn with a fixed seed from the fold's answers (split as the dermatologists'
dev half is: ``bench_grader.fold``); study fold A, report both.
"""

from __future__ import annotations

import argparse
import random
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path

# The evaluation helpers live in the repository's tools/, not in the installed package.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.bench_grader import DEFAULT_DATASETS, fold
from pytest_agentclinic.grading.judging.craftmd_grader import CraftMDGrader
from pytest_agentclinic.grading.judging.rules import POLICIES
from tools.craftmd_eval import RECORDED, load_recorded

#: How other models write one diagnosis X ({r}; {R} in capitals): openings, judgements,
#: notes, codes, markdown, sections, tags and closing lines.
STYLES: dict[str, str] = {
    "grounds": "Based on the clinical findings, {r}.",
    "stance": "In my opinion, {r}.",
    "i_suspect": "I suspect {r}.",
    "i_think": "I think {r}.",
    "favor": "Favor {r}.",
    "believe_suffering": "Based on the information provided, I believe the patient is "
                         "suffering from {r}.",
    "is_most_likely": "{r} is the most likely diagnosis given the history and the "
                      "examination.",
    "consistent": "The findings are most consistent with {r}.",
    "confidence": "{r} (confidence: high)",
    "confidence_dash": "{r} - confidence: high",
    "probability": "{r} (probability: 0.8)",
    "confidence_line": "Final diagnosis: {r}\nConfidence: High",
    "icd_code": "{r} (ICD-10: L40.0)",
    "icd_comma": "{r}, ICD-10 code L40.0",
    "working": "{r} (working diagnosis)",
    "phase": "{r} (acute phase)",
    "severity": "{r}, moderate severity",
    "confirm_plan": "I think it's {r}, but I would confirm it with a biopsy.",
    "bold": "**{r}**",
    "upper": "FINAL DIAGNOSIS: {R}",
    "md_sections": "**Most Likely Diagnosis:** {r}\n\n**Key Supporting Features:**\n- rash "
                   "for two weeks\n- no fever\n\n**Differential Diagnoses:**\n1. Contact "
                   "dermatitis\n2. Tinea corporis",
    "heading_rationale": "### Diagnosis\n{r}\n\n### Rationale\nThe history fits.",
    "lead_bold": "Based on the patient's symptoms and examination findings, the most likely "
                 "diagnosis is:\n\n**{r}**\n\nThis diagnosis is supported by the history.",
    "json_nested": '```json\n{{"final_diagnosis": {{"name": "{r}", "confidence": 0.8}}}}\n```',
    "tags": "<diagnosis>{r}</diagnosis>\n<confidence>high</confidence>",
    "think": "<think>Let me weigh the findings.</think>\nFinal diagnosis: {r}",
    "closing": "{r}\n\nPlease consult a healthcare professional for confirmation.",
    "courtesy": "Answer: {r}\n\nI hope this helps!",
    "ready_reason": "DIAGNOSIS READY: {r}. The history and examination are classic.",
    "ready_reasoning": "DIAGNOSIS READY: {r}\n\nReasoning: The history and examination fit.",
    # Small open chat models: a preamble, a caveat, a conclusion, a disclaimer.
    "caveat_after": "Based on the symptoms and history you have provided, the most likely "
                    "diagnosis is {r}. However, it is important to note that a definitive "
                    "diagnosis can only be made by a qualified healthcare professional.",
    "not_a_doctor": "I am not a medical professional, but based on the information provided "
                    "it sounds like {r}. Please consult a doctor.",
    "in_conclusion": "The patient presents with the findings described above. In conclusion, "
                     "the diagnosis is {r}.",
    # The case retold before the answer, and the grounds before the name.
    "retold": "A 45-year-old patient presents with the symptoms described. Her examination "
              "shows the lesions above. The most likely diagnosis is {r}.",
    "retold_has": "The patient has the history and findings described. I suspect {r}.",
    "grounds_first": "Given the history and the examination findings, {r} is the most likely "
                     "diagnosis.",
    "grounds_listed": "Given the onset, the distribution, and the course, {r} is the most "
                      "likely diagnosis.",
    "patient_has": "The patient most likely has {r}.",
    "the_answer_is": "The answer is {r}.",
    "quoted": 'The diagnosis is "{r}".',
    "italic": "*{r}*",
    "check_mark": "\u2705 Final diagnosis: {r}",
    "speaker": "Doctor: Final diagnosis: {r}",
    "numbered_plan": "1. Diagnosis: {r}\n2. Treatment: topical therapy\n3. Follow-up: in two "
                     "weeks",
    "explanation": "Answer: {r}\nExplanation: The clinical features are typical.",
    "truncated": "Final diagnosis: {r}\n\nThe patient should be referred to a",
    # Reasoning models: a thought block, a boxed answer, a stated confidence.
    "think_musing": "<think>\nThe rash could be several things; the history narrows it.\n"
                    "</think>\n\nFinal diagnosis: {r}",
    "boxed": "**Final Answer:** \\boxed{{{r}}}",
    "boxed_text": "$\\boxed{{\\text{{{r}}}}}$",
    "confidence_pct": "Answer: {r} (confidence 85%)",
    # Structured outputs.
    "yaml": "diagnosis: {r}\nconfidence: high",
    "xml_answer": "<answer>{r}</answer>",
    "table_row": "| Diagnosis | {r} |",
    "final_heading": "## Final Answer\n{r}",
    # Round 2: long markdown answers, reasoning chains, structured fields and chat turns.
    "md_long": "## Diagnosis\n\n**{r}**\n\n## Rationale\n\n- The history fits the typical "
               "course.\n- The examination shows the characteristic lesions.\n\n## Next "
               "steps\n\n- Start first-line treatment.\n- Review in two weeks.",
    "reasoning_chain": "1. The patient has a two-week history of the presenting complaint.\n"
                       "2. The examination shows the characteristic findings.\n3. The "
                       "laboratory results support this.\n\nTherefore, the diagnosis is {r}.",
    "final_answer_latex": "Final Answer: The final answer is $\\boxed{{\\text{{{r}}}}}$",
    "json_fields": '{{"diagnosis": "{r}", "confidence": "high", "differential": [], '
                   '"reasoning": "The history and examination fit."}}',
    "json_pretty": '```json\n{{\n  "diagnosis": "{r}",\n  "icd10": "L40.0",\n  '
                   '"confidence": 0.9\n}}\n```',
    "xml_reasoning": "<reasoning>The history and examination fit.</reasoning>\n"
                     "<diagnosis>{r}</diagnosis>",
    "dialogue": "Doctor: Based on everything you've told me, you have {r}.",
    "ready_explained": "DIAGNOSIS READY: {r}\n\nThe presentation, the course and the "
                       "examination findings all point to this diagnosis.",
    "summary_table": "| Field | Value |\n|---|---|\n| Diagnosis | {r} |\n| Confidence | High |",
    "tldr": "TL;DR: {r}",
    "bullets_severity": "- **Diagnosis:** {r}\n- **Severity:** mild",
    "sign_off": "{r}. Please consult a dermatologist.",
    "patient_facing": "Final diagnosis: {r}\n\n{r} is a common condition that often causes "
                      "itching and redness. It usually responds well to treatment.",
    "question_back": "The most likely diagnosis is {r}. Have you noticed any other symptoms "
                     "since it started?",
    "lowercase": "final diagnosis: {l}",
    "caps_heading": "FINAL DIAGNOSIS\n\n{r}\n\nThe findings support this diagnosis.",
    "dx": "Dx: {r}",
    "ddx_none": "Dx: {r}\nDdx considered and excluded: none",
    "crlf": "Final diagnosis: {r}\r\nConfidence: high\r\n",
    "trailing_space": "Final diagnosis: {r}   \n\n\n   \n",
    "impression_plan": "Impression: {r}\nPlan: topical therapy and review in two weeks.",
    "soap": "S: Itchy rash for two weeks.\nO: Erythematous plaques on the extensor "
            "surfaces.\nA: {r}\nP: Topical therapy; follow up in two weeks.",
    "bold_in_sentence": "The most likely diagnosis is **{r}**, given the history and the "
                        "examination.",
    "emoji_label": "\U0001fa7a Diagnosis: {r}",
    "blockquote": "> **Diagnosis:** {r}",
    "rule_disclaimer": "Diagnosis: {r}\n\n---\n\n*This is not medical advice.*",
    "step_by_step": "Let's think step by step. The rash is chronic and itchy. The examination "
                    "is typical. So the answer is {r}.",
    "confident": "I am confident the diagnosis is {r}.",
    "bold_headings": "**Diagnosis**\n{r}\n\n**Confidence**\nHigh",
    "numbered_one": "Final diagnosis:\n1. {r}",
    "primary_secondary": "Primary diagnosis: {r}\nSecondary diagnoses: none",
    "differential_none": "Diagnosis: {r}\nDifferential diagnosis: none",
    "html_strong": "<p><strong>Diagnosis:</strong> {r}</p>",
    "heres_why": "**Diagnosis: {r}**\n\nHere's why:\n\n*   **History:** the course fits.\n"
                 "*   **Examination:** the lesions are typical.",
    "supporting": "Based on the presentation, this is most consistent with **{r}**.\n\nKey "
                  "features supporting this:\n- the onset\n- the distribution",
    "classic_for": "The patient's presentation is classic for {r}.",
    "you_most_likely": "You most likely have {r}. It is treatable, so please don't worry.",
    "my_final": "After reviewing the case, my final diagnosis is {r}. Treatment should begin "
                "promptly.",
    # Round 3: reasoning models' thought blocks and rules, chat models' breakdowns and hedges,
    # medical models' one-liners, labels with codes and roles, markup of other formats.
    "think_bare": "<think>\nThe rash has lasted two weeks. The plaques are on the extensor "
                  "surfaces and there is no fever. The history and the examination settle "
                  "it.\n</think>\n\n{r}",
    "think_bold_answer": "<think>\nOkay, let me go through the findings. Itchy, scaly "
                         "plaques... wait, the nails are pitted too. That settles it.\n"
                         "</think>\n\n**Answer:** {r}",
    "rule_answer": "The history and the examination point to one condition.\n\n---\n\n"
                   "**Answer:** {r}",
    "breakdown": "Here's a breakdown of the case:\n\n**Most Likely Diagnosis:** {r}\n\n"
                 "**Important Considerations:**\n\n*   A biopsy can confirm the "
                 "diagnosis.\n*   Treatment should start promptly.\n*   Follow up in two "
                 "weeks.",
    "careful_commit": "I'd want to be careful here, but based on the history and the "
                      "examination, this is most likely {r}.",
    "likely_suffering": "The patient is likely suffering from {r}.",
    "eos_token": "The diagnosis is {r}</s>",
    "correct_answer": "The correct answer is {r}.",
    "icd_label": "Diagnosis (ICD-10): {r}",
    "primary_na": "Primary diagnosis: {r}\nSecondary diagnosis: N/A",
    "html_sections": "<h3>Assessment</h3>\n<p>The most likely diagnosis is <b>{r}</b>.</p>"
                     "\n<ul><li>Review in two weeks.</li></ul>",
    "rst_heading": "Diagnosis\n=========\n\n{r}\n\nRationale\n---------\n\nThe history "
                   "fits.",
    "org_heading": "* Diagnosis\n{r}\n* Plan\nTopical therapy; review in two weeks.",
    "steps_label": "Step 1: Review the history. The rash has lasted two weeks.\nStep 2: "
                   "Examine the skin. The lesions are typical.\nStep 3: Consider the course. "
                   "It is chronic.\nStep 4: Diagnosis: {r}",
    "seems_most_likely": "Based on the information provided, {r} seems the most likely.",
    "quote_line": "> {r}",
    "code_fence": "```\n{r}\n```",
    "csv_line": "diagnosis,confidence\n{r},0.9",
    "emoji_lines": "\U0001f50d Most likely diagnosis: {r}\n\U0001f48a Treatment: topical "
                   "therapy\n\U0001f4c5 Follow-up: two weeks",
    "hope_helps": "The most likely diagnosis is {r}. Hope this helps! Let me know if you have "
                  "any other questions.",
    "tool_call": '{{"name": "submit_diagnosis", "arguments": {{"diagnosis": "{r}"}}}}',
    "python_dict": "{{'diagnosis': '{r}', 'confidence': 0.9}}",
    "xml_response": "<response>\n  <diagnosis>{r}</diagnosis>\n  <confidence>0.9</confidence>"
                    "\n</response>",
    "table_columns": "| Diagnosis | Confidence | Key findings |\n|---|---|---|\n| {r} | High "
                     "| the history and the examination |",
    "label_dash_item": "Final diagnosis:\n- {r}",
    "latex_bold": "\\textbf{{Diagnosis:}} {r}",
    "square_note": "{r} [high confidence]",
    "diagnosed_with": "The patient is diagnosed with {r}.",
    "arrow": "Diagnosis \u2192 {r}",
    "hard_but": "It's hard to be certain without a biopsy, but I believe this is {r}.",
    "conclusion_has": "**Conclusion:** The patient has {r}.",
    "reasoning_answer": "Reasoning: The rash is chronic and scaly; the nails are pitted.\n"
                        "Answer: {r}",
}
_NOT_BARE = re.compile(r"diagnos|possible|likely|suspect|probabl|\*\*|answer", re.I)
_LABEL = re.compile(r"^\W*final\s+diagnosis\W*", re.I)


def bare_answers(datasets: Path, which: str, sample: int) -> list[tuple[str, str]]:
    """(answer, truth) of recorded free responses that are a name alone, in the fold."""
    folder = datasets / "craftmd"
    found = []
    for model in RECORDED:
        for line in load_recorded(folder / RECORDED[model]):
            if line["format"] != "frq" or (which != "all" and fold(line["case_id"]) != which):
                continue
            bare = _LABEL.sub("", line["response"].strip()).strip().rstrip(".")
            if bare and "\n" not in bare and len(bare) <= 150 and not _NOT_BARE.search(bare):
                found.append((bare, str(line["correct_answer"])))
    random.Random(31).shuffle(found)
    return found[:sample]


def restyle(style: str, bare: str) -> str:
    """The bare answer written in one style ({r} as given, {R} in capitals, {l} lowercase)."""
    return style.format(r=bare, R=bare.upper(), l=bare.lower())


def changes(answers: list[tuple[str, str]], grader: CraftMDGrader,
            ) -> tuple[Counter[str], dict[str, list[str]]]:
    """Per style, how many verdicts differ from the bare answer's, and examples."""
    changed: Counter[str] = Counter()
    examples: dict[str, list[str]] = defaultdict(list)
    for bare, truth in answers:
        base = grader.grade_frq(bare, truth).verdict
        for name, style in STYLES.items():
            verdict = grader.grade_frq(restyle(style, bare), truth).verdict
            if verdict != base:
                changed[name] += 1
                examples[name].append(f"{int(base)} -> {int(verdict)}: {bare!r} | {truth!r}")
    return changed, examples


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", type=Path, default=DEFAULT_DATASETS)
    parser.add_argument("--fold", choices=("A", "B", "all"), default="A")
    parser.add_argument("--sample", type=int, default=3000)
    parser.add_argument("--policy", choices=("strict", "paper", "both"), default="both")
    parser.add_argument("--examples", type=int, default=3)
    args = parser.parse_args(argv)
    if not (args.datasets / "craftmd").is_dir():
        print(f"no CRAFT-MD datasets under {args.datasets}", file=sys.stderr)
        return 2
    answers = bare_answers(args.datasets, args.fold, args.sample)
    for policy in POLICIES:
        if args.policy not in ("both", policy):
            continue
        changed, examples = changes(answers, CraftMDGrader(policy=policy))
        total = sum(changed.values())
        print(f"{policy}, fold {args.fold}: {len(answers)} bare answers x {len(STYLES)} "
              f"styles; verdicts changed by the style: {total} "
              f"({total / max(1, len(answers) * len(STYLES)):.3%})")
        for name in STYLES:
            if changed[name]:
                print(f"  {name:<18} {changed[name]:>5}")
                for line in examples[name][: args.examples]:
                    print(f"      {line}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
