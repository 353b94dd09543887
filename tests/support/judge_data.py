"""Judge test helpers: stand-in judge policies for the stub server and a small marked data set.

The policies read the answers back out of the default prompt's user message, so tests can
compute the expected verdicts independently from the files they import.
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

# Sections of DEFAULT_TEMPLATE's user message.
_SECTIONS = re.compile(
    r"## Reference answer \(written by a human\)\n(.*)\n\n## Assistant A's answer\n(.*)"
    r"\n\n## Assistant B's answer\n(.*)\n\n## End of answers",
    re.S,
)
_SCORE = re.compile(r"<score:(\d+)>")
ALWAYS_A = "<always-A>"
FIRST_TIES = "<first-ties>"  # a judge that calls it a tie whenever this answer is shown first
DOCUMENT_MARK = "DOCUMENT-TEXT-NEVER-SENT-TO-THE-JUDGE"


def answers_in(body: dict[str, Any]) -> tuple[str, str, str]:
    """Return (reference, answer A, answer B) from a chat request built with the default prompt."""
    match = _SECTIONS.search(body["messages"][-1]["content"])
    if match is None:
        raise AssertionError("the request does not use the default prompt layout")
    return match.group(1), match.group(2), match.group(3)


def _reply(verdict: str, note: str = "") -> str:
    # A decoy token first: only the last verdict counts. Markup checks that pages escape replies.
    return f"Weighing both against the reference (a tie would be [[C]]). {note}<b>Final</b> verdict: [[{verdict}]]"


def marked_verdict(answer_a: str, answer_b: str) -> str:
    """Verdict from markers: <always-A> fakes position bias, <first-ties> a one-sided tie, else higher score."""
    if ALWAYS_A in answer_a + answer_b:
        return "A"
    if FIRST_TIES in answer_a:
        return "C"
    scores = [int(_SCORE.search(answer).group(1)) for answer in (answer_a, answer_b)]
    return "C" if scores[0] == scores[1] else ("A" if scores[0] > scores[1] else "B")


def marker_judge(body: dict[str, Any]) -> str:
    _reference, answer_a, answer_b = answers_in(body)
    return _reply(marked_verdict(answer_a, answer_b))


def shorter_verdict(answer_a: str, answer_b: str) -> str:
    """Prefer the shorter answer (a stand-in judge whose verdicts tests can predict)."""
    if len(answer_a) == len(answer_b):
        return "C"
    return "A" if len(answer_a) < len(answer_b) else "B"


def shorter_judge(body: dict[str, Any]) -> str:
    _reference, answer_a, answer_b = answers_in(body)
    return _reply(shorter_verdict(answer_a, answer_b), f"Lengths {len(answer_a)} and {len(answer_b)}. ")


def biased_shorter_verdict(answer_a: str, answer_b: str) -> str:
    """Prefer the shorter answer, but pick whichever comes first when lengths are within 10%."""
    if abs(len(answer_a) - len(answer_b)) < 0.1 * max(len(answer_a), len(answer_b)):
        return "A"
    return shorter_verdict(answer_a, answer_b)


def biased_shorter_judge(body: dict[str, Any]) -> str:
    _reference, answer_a, answer_b = answers_in(body)
    return _reply(biased_shorter_verdict(answer_a, answer_b), f"Lengths {len(answer_a)} and {len(answer_b)}. ")


def expected_outcomes(pairs: list[tuple[str, str]], verdict) -> dict[str, int]:
    """Count wins/losses/ties of the system (first answer) over both orders under `verdict`."""
    counts = {"wins": 0, "losses": 0, "ties": 0}
    for system, baseline in pairs:
        for first, second, system_letter in ((system, baseline, "A"), (baseline, system, "B")):
            letter = verdict(first, second)
            counts["ties" if letter == "C" else ("wins" if letter == system_letter else "losses")] += 1
    return counts


def read_pred_file(path: Path) -> dict[tuple[str, str], str]:
    """Map normalised (query, gt) to the row's answer, as the importer pairs rows."""
    rows = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            answer = next(v for k, v in row.items() if k.endswith("_pred"))
            rows[(" ".join(row["query"].split()), " ".join(row["gt"].split()))] = answer
    return rows


# (system score, baseline score, extra system marker) per human-eval question; see EXPECTED.
HUMAN_EVAL_PLAN = [(3, 1, ""), (2, 1, ""), (1, 3, ""), (2, 2, ""), (1, 1, ALWAYS_A), (3, 1, FIRST_TIES)]
LLM_PLAN = [(3, 2, ""), (1, 2, "")]
SYSTEM, BASELINE = "sys-x", "turbo-16k-0613"
SCRIPT_ANSWER = "<script>alert('judge')</script>"

# Outcomes from the system's side, order AB then BA:
# 1, 2 win twice; 3 loses twice; 4 ties twice; 5 win + loss (position bias); 6 tie + win.
EXPECTED = {"wins": 6, "losses": 3, "ties": 3, "errors": 0, "inconsistent": 2,
            "win_rate": 100 * (6 + 0.5 * 3) / 12, "win_rate_fastchat": 100 * (2 + 0.5 * 3) / 6,
            "consistency": 4 / 6}
EXPECTED_ALL = {"wins": 8, "losses": 5, "ties": 3}


def _questions(prefix: str, count: int) -> tuple[list[str], list[str]]:
    questions = [f"{prefix} question {i}: what did the board decide about item {i}?" for i in range(1, count + 1)]
    references = [f"The human reference answer to {prefix.lower()} question {i}." for i in range(1, count + 1)]
    return questions, references


def _pred_rows(questions, references, plan, side: int, key: str, evaluation: str) -> str:
    lines = []
    for i, (query, gt, (system_score, baseline_score, marker)) in enumerate(zip(questions, references, plan)):
        if side == 0:
            answer = f"System answer {i} <score:{system_score}> {marker}".strip()
            if i == 0:
                answer += f" {SCRIPT_ANSWER}"
        else:
            answer = f"Baseline answer {i} <score:{baseline_score}>" + (f" {ALWAYS_A}" if marker == ALWAYS_A else "")
        lines.append(json.dumps({"query": query, "gt": gt, key: answer, "evaluation": evaluation}))
    return "\n".join(lines) + "\n"


def write_judge_dataset(root: Path) -> Path:
    """Write a tiny L-Eval-format data set (6 human-eval questions, 2 LLM-judged task questions)."""
    questions, references = _questions("Human-eval", len(HUMAN_EVAL_PLAN))
    (root / "human_eval").mkdir(parents=True)
    document = {
        "instructions": questions, "outputs": references, "gpt4_outputs": references, "claude_outputs": references,
        "input": f"{DOCUMENT_MARK}\n\nA long board meeting transcript.", "source": "meeting_summ",
        "evaluation": "human",
    }
    (root / "human_eval" / "judge.ref.jsonl").write_text(json.dumps(document) + "\n", encoding="utf-8")
    for side, name in enumerate((SYSTEM, BASELINE)):
        (root / "human_eval" / f"{name}.pred.jsonl").write_text(
            _pred_rows(questions, references, HUMAN_EVAL_PLAN, side, f"{name}_pred", "human"), encoding="utf-8")
    task_questions, task_references = _questions("Task", len(LLM_PLAN))
    tasks = root / "LEval-data" / "Open-ended-tasks"
    tasks.mkdir(parents=True)
    task = {"instructions": task_questions, "outputs": task_references, "input": f"{DOCUMENT_MARK} 10-K report.",
            "source": "financial_qa", "evaluation": "LLM"}
    (tasks / "financial_qa.jsonl").write_text(json.dumps(task) + "\n", encoding="utf-8")
    for side, name in enumerate((SYSTEM, BASELINE)):
        folder = root / "llm_eval" / name
        folder.mkdir(parents=True)
        (folder / "financial_qa.pred.jsonl").write_text(
            _pred_rows(task_questions, task_references, LLM_PLAN, side, f"{name}_pred", "LLM"), encoding="utf-8")
    return root
