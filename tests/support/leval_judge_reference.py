"""Test oracle: an independent re-statement of L-Eval's pairwise judge, ``Evaluation/llm_eval.py``.

It follows the reference step by step, quirks included, so that the app's ``leval`` judge
profile can be checked against it: which rows it reads, how it pairs them, what it sends,
how it reads a verdict and how it counts. It lives in the test folder only and is never
imported by the application. Pass it a ``judge`` callable (messages -> reply) in place of
the API; the reference's retries end in the reply ``$ERROR$``, which a callable may return.

What the reference does, and this oracle with it:

* Reading (its own ``read_jsonl``): a line that is not JSON, or whose object has no
  ``evaluation`` (or is not an object at all), is skipped without a word. If any kept row's
  ``evaluation`` is exactly ``"f1"`` or ``"rouge"`` (case-sensitive), only those rows are kept.
* Pairing (``construct_pairs``): both files must keep the same number of rows (assert).
  The prediction key is the first key containing ``_pred`` in the first kept row of the
  predictions and the LAST such key in the first kept row of the battle file. Battle rows are
  indexed by the raw concatenation ``query + gt`` (a later duplicate replaces an earlier one);
  each prediction row whose ``str(query) + str(gt)`` is indexed is judged, in file order
  (duplicates judged again), the others are dropped silently. The battle answer is written
  into the prediction row under the battle key, so when both files use the same key, both
  sides of every pair are the battle file's answer.
* Calls (``run_judge_pair``): system prompt + user prompt filled with ``str.format``
  (question = query, ref_answer = gt), temperature 0, ``max_tokens=2048``, ``n=1``; first the
  prediction as assistant A, then swapped.
* Verdict: ``"[[A]]" in reply`` gives A, else ``"[[B]]" in reply`` gives B, else ``"[[C]]"``
  gives a tie, else an error. No spaces, no case folding, first test wins (not the last token).
* Counting: both verdicts of every pair are counted by model name (the key without every
  ``_pred``), plus ``tie`` and ``error``. Errors are dropped; win rate of each name that won at
  least once = (wins + 0.5 * ties) / (all wins + ties). Two sides with the same name share one
  count, so that name's rate is (all wins + 0.5 * ties) / (all wins + ties).
"""
from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

# Evaluation/llm_eval.py, __main__: judge_prompts["system_prompt"] and ["prompt_template"], verbatim
# (note the two spaces after "long document.").
SYSTEM_PROMPT = (
    "Please act as an impartial judge and evaluate the quality of the responses provided by two AI assistants "
    "to the user question about the content of a long document.  You will be given a reference answer written "
    "by human, assistant A's answer, and assistant B's answer. Your job is to evaluate which assistant's answer "
    "is better. Begin your evaluation by comparing both assistants' answers with the reference answer. "
    "Additional details or information that are not mentioned in reference answer cannot be considered as "
    "advantages and do not let them sway your judgment. Your evaluation should also consider the relevance to "
    "user's question but it is more important to avoid factual errors according to the reference answer. Avoid "
    "any position biases and ensure that the order in which the responses were presented does not influence "
    "your decision. Do not allow the length of the responses to influence your evaluation. Do not favor certain "
    "names of the assistants. Be as objective as possible. After providing your explanation, output your final "
    "verdict by strictly following this format: \"[[A]]\" if assistant A is better, \"[[B]]\" if assistant B is "
    "better, and \"[[C]]\" for a tie."
)
PROMPT_TEMPLATE = (
    "[User Question]\n{question}\n\n"
    "[The Start of Reference Answer]\n{ref_answer}\n[The End of Reference Answer]\n\n"
    "[The Start of Assistant A's Answer]\n{answer_a}\n[The End of Assistant A's Answer]\n\n"
    "[The Start of Assistant B's Answer]\n{answer_b}\n[The End of Assistant B's Answer]"
)
TEMPERATURE = 0
MAX_TOKENS = 2048
API_ERROR_OUTPUT = "$ERROR$"
NGRAM_EVALUATIONS = ("rouge", "f1")

Judge = Callable[[list[dict[str, str]]], str]


# --- reading ------------------------------------------------------------------

def read_judge_rows(path: Path | str) -> list[dict]:
    """Read a prediction file as llm_eval.read_jsonl does."""
    kept: list = []
    evaluations: set = set()
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            try:
                row = json.loads(line)
                evaluations.add(row["evaluation"])
                kept.append(row)
            except Exception:  # noqa: BLE001 - the reference's bare except: any failure drops the line
                continue
    if "rouge" in evaluations or "f1" in evaluations:
        kept = [row for row in kept if row["evaluation"] == "rouge" or row["evaluation"] == "f1"]
    return kept


# --- pairing ------------------------------------------------------------------

def construct_pairs(pred_path: Path | str, battle_path: Path | str) -> tuple[list[dict], str, str]:
    """Return (paired rows, prediction key, battle key); raise as the reference would."""
    pred_rows = read_judge_rows(pred_path)
    battle_rows = read_judge_rows(battle_path)
    assert len(pred_rows) == len(battle_rows), "the two files keep different numbers of rows"
    pred_key = ""
    for key in pred_rows[0]:  # IndexError on a file with no kept row, as upstream
        if "_pred" in key:
            pred_key = key
            break
    battle_key = ""
    for key in battle_rows[0]:
        if "_pred" in key:
            battle_key = key  # no break: the last such key
    assert "_pred" in pred_key
    assert "_pred" in battle_key
    by_text: dict = {}
    for row in battle_rows:
        by_text[row["query"] + row["gt"]] = row[battle_key]
    paired = []
    for row in pred_rows:
        text = str(row["query"]) + str(row["gt"])
        if text not in by_text:
            continue
        row[battle_key] = by_text[text]
        paired.append(row)
    return paired, pred_key, battle_key


# --- one judgment -------------------------------------------------------------

def user_prompt(question, answer_a, answer_b, ref_answer) -> str:
    return PROMPT_TEMPLATE.format(question=question, answer_a=answer_a, answer_b=answer_b, ref_answer=ref_answer)


def messages_for(question, answer_a, answer_b, ref_answer) -> list[dict[str, str]]:
    return [{"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": user_prompt(question, answer_a, answer_b, ref_answer)}]


def leval_verdict(judgment: str) -> str:
    """Return "A", "B", "tie" or "error" by the reference's substring tests, in its order."""
    if "[[A]]" in judgment:
        return "A"
    if "[[B]]" in judgment:
        return "B"
    if "[[C]]" in judgment:
        return "tie"
    return "error"


# --- a whole run --------------------------------------------------------------

@dataclass
class JudgedPair:
    query: object
    gt: object
    answer_1: object
    answer_2: object
    g1_winner: str  # a model name, "tie" or "error"
    g2_winner: str
    g1_judgment: str
    g2_judgment: str


@dataclass
class ReferenceRun:
    """What llm_eval.py prints: counts per name, ties, errors and win rates (fractions)."""

    model_1: str
    model_2: str
    statistics: dict[str, int]
    win_rates: dict[str, float]
    pairs: list[JudgedPair] = field(default_factory=list)
    calls: list[list[dict[str, str]]] = field(default_factory=list)

    @property
    def ties(self) -> int:
        return self.statistics["tie"]

    @property
    def errors(self) -> int:
        return self.statistics["error"]

    def wins(self, name: str) -> int:
        return self.statistics.get(name, 0)


def win_rates(statistics: dict[str, int]) -> dict[str, float]:
    """llm_eval.calculate_win_rate: errors dropped, a tie is half a win for every name."""
    counts = dict(statistics)
    counts.pop("error")
    total = sum(counts.values())
    half_ties = 0.5 * counts.pop("tie")
    return {name: (half_ties + wins) / total for name, wins in counts.items()}


def judge_pairs(samples: list[dict], model_1: str, model_2: str, judge: Judge) -> ReferenceRun:
    """Judge paired rows in both orders and count as llm_eval.py's __main__ does."""
    name_1, name_2 = model_1.replace("_pred", ""), model_2.replace("_pred", "")
    convert = {"model_1": name_1, "model_2": name_2, "tie": "tie", "error": "error"}
    statistics: dict[str, int] = {"tie": 0, "error": 0}
    run = ReferenceRun(name_1, name_2, statistics, {})
    for sample in samples:
        answer_1, answer_2 = sample[model_1], sample[model_2]
        question, reference = sample["query"], sample["gt"]
        outcomes, judgments = [], []
        for first, second, mapping in ((answer_1, answer_2, {"A": "model_1", "B": "model_2"}),
                                       (answer_2, answer_1, {"A": "model_2", "B": "model_1"})):
            messages = messages_for(question, first, second, reference)
            run.calls.append(messages)
            judgment = judge(messages)
            winner = leval_verdict(judgment)
            outcomes.append(convert[mapping.get(winner, winner)])
            judgments.append(judgment)
        for outcome in outcomes:
            statistics[outcome] = statistics.get(outcome, 0) + 1
        run.pairs.append(JudgedPair(question, reference, answer_1, answer_2, outcomes[0], outcomes[1], *judgments))
    run.win_rates = win_rates(statistics)
    return run


def run_llm_eval(pred_path: Path | str, battle_path: Path | str, judge: Judge) -> ReferenceRun:
    """The whole of llm_eval.py on two files, with `judge` standing in for the API."""
    samples, model_1, model_2 = construct_pairs(pred_path, battle_path)
    return judge_pairs(samples, model_1, model_2, judge)
