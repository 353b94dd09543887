"""The leval prompt profile against an oracle that follows L-Eval's turbo16k-test.py step by step."""
from __future__ import annotations

import json
import random

import pytest

from app.core.generation import predfile, prompts, tokens, truncate
from app.core.generation.prompts import LEVAL_PROFILE, Question
from tests.support import leval_prompt_reference as ref
from tests.support.shared import require_shared

pytestmark = pytest.mark.database_free  # a pure core: the PostgreSQL pass leaves it out

MODEL = "turbo-16k-0613-16k"


def ours(metric: str, task: str, data: list[dict], max_length: int, count, model_key: str = MODEL) -> list[dict]:
    """Run one L-Eval file through app.core.generation the way the job will (answers faked like the oracle's)."""
    out = []
    n = 0
    for d in data:
        cut = truncate.truncate_leval(d["input"], max_length, count, keep_end=prompts.keeps_end(task))
        for inst, gt in zip(d["instructions"], d["outputs"]):
            question = Question(task=task, evaluation=d["evaluation"], instruction=inst, reference=gt)
            plan = prompts.build(LEVAL_PROFILE, question, cut.text, length_instruction=True)
            answer = f"<answer {n}>"
            if plan.followup is not None:
                answer = prompts.combine_fact(answer, f"<fact {n}>")
            calls = [[dict(m) for m in plan.messages]]
            if plan.followup is not None:
                calls.append(plan.followup_messages())
            row = predfile.pred_row(inst, gt, plan.recorded_prompt, model_key, answer, d["evaluation"])
            out.append({"calls": calls, "row": row, "document": cut.text})
            n += 1
    return out


def assert_same(expected: list[dict], actual: list[dict], where: str) -> None:
    assert len(actual) == len(expected), where
    for i, (e, a) in enumerate(zip(expected, actual)):
        assert a["document"] == e["document"], f"{where} question {i}: truncated document differs"
        assert a["calls"] == e["calls"], f"{where} question {i}: messages differ"
        assert list(a["row"].items()) == list(e["row"].items()), f"{where} question {i}: row differs"
        assert predfile.dumps_rows([a["row"]]) == json.dumps(e["row"]) + "\n"


def _words(rng: random.Random, n: int) -> str:
    vocab = ["alpha", "beta", "{}", "{document}", "{instruction}", "x\ny", "", "naïve", "code()", "A."]
    return " ".join(rng.choice(vocab) for _ in range(n))


def synthetic_file(task: str, evaluation: str, rng: random.Random, lines: int = 3) -> list[dict]:
    data = []
    for _ in range(lines):
        k = rng.randint(1, 4)
        instructions = [_words(rng, rng.randint(1, 12)) for _ in range(k)]
        if task == "sci_fi":
            instructions = [i + " based on the world described in the document." for i in instructions]
        data.append({
            "input": _words(rng, rng.randint(50, 3000)),
            "instructions": instructions,
            "outputs": [_words(rng, rng.randint(0, 40)) for _ in range(k)],
            "evaluation": evaluation,
            "source": task,
        })
    return data


CLOSED = [("coursera", "exam"), ("quality", "exam"), ("tpo", "exam"), ("gsm100", "exam"),
          ("topic_retrieval_longchat", "exam"), ("codeU", "exam"), ("sci_fi", "exam")]
OPEN = [("financial_qa", "f1"), ("gov_report_summ", "rouge"), ("narrative_qa", "f1"), ("review_summ", "rouge")]


@pytest.mark.parametrize("task,evaluation", CLOSED + OPEN)
@pytest.mark.parametrize("max_length", [300, 2000, 100_000])
def test_synthetic_files_match_the_script(task, evaluation, max_length):
    rng = random.Random(f"{task}-{max_length}")
    data = synthetic_file(task, evaluation, rng)
    metric = "exam_eval" if evaluation == "exam" else "ngram_eval"
    file_name = f"Predictions/{metric}/{MODEL}/{task}.pred.jsonl"
    count = tokens.estimate_tokens
    expected = ref.run_file(metric, file_name, data, MODEL, max_length, count)
    assert_same(expected, ours(metric, task, data, max_length, count), f"{task} @ {max_length}")


@pytest.mark.parametrize("metric", ["human_eval", "llm_gpt4_eval", "llm_turbo_eval"])
def test_synthetic_subsets_match_the_script(metric):
    rng = random.Random(metric)
    files = {task: synthetic_file(task, rng.choice(["human", "LLM", "f1"]), rng, lines=4)
             for task, _ in OPEN}
    data = ref.subset_rows(metric, files)
    assert data, "the synthetic subset is empty"
    expected = ref.run_file(metric, f"Predictions/{metric}/{MODEL}.pred.jsonl", data, MODEL, 1000,
                            tokens.estimate_tokens)
    actual = []
    for task in ref.DATASETS_OPEN_ENDED:  # ours runs per task; the subset keeps L-Eval's task order
        rows = [d for d in data if d["source"] == task]
        actual += ours(metric, task, rows, 1000, tokens.estimate_tokens)
    # The faked answers are numbered per call of ``ours``; compare everything but the answers.
    for e, a in zip(expected, actual):
        e["row"][f"{MODEL}_pred"] = a["row"][f"{MODEL}_pred"] = ""
    assert_same(expected, actual, metric)


def test_length_instruction_off_drops_only_the_length_sentence():
    q = Question("financial_qa", "f1", "What was the revenue?", "Ten million dollars in total")
    on = prompts.build(LEVAL_PROFILE, q, "DOC", length_instruction=True)
    off = prompts.build(LEVAL_PROFILE, q, "DOC", length_instruction=False)
    assert on.length_words == 5 and off.length_words is None
    assert on.messages[1]["content"] == (
        "Document is as follows. DOC Instruction: What was the revenue? "
        "The suggested output length is around 5 words. Output: ")
    assert off.messages[1]["content"] == "Document is as follows. DOC Instruction: What was the revenue? Output: "
    assert on.messages[0] == off.messages[0]
    exam = Question("quality", "exam", "Which? A. x B. y", "A")
    assert (prompts.build(LEVAL_PROFILE, exam, "D", True).messages
            == prompts.build(LEVAL_PROFILE, exam, "D", False).messages)


def test_exam_hints_per_task():
    def system(task, evaluation="exam"):
        return prompts.build(LEVAL_PROFILE, Question(task, evaluation, "Q", "A"), "D", True).messages[0]["content"]
    assert "(like A or AB)" in system("coursera")
    assert "(like A or B)" in system("quality") and "(like A or B)" in system("tpo")
    assert "The answer is _" in system("gsm100")
    assert "\"True\" or \"False\"" in system("sci_fi")
    assert "retrieve the first/second/third topic" in system("topic_retrieval_longchat")
    assert "code base" in system("codeU")
    assert system("a_new_task", "exam") == system("quality")
    assert system("a_new_task", "f1").startswith("Now you are given a very long document. Please follow the instruction after")


def test_a_document_is_never_substituted_into_again():
    q = Question("narrative_qa", "f1", "Who is {document}?", "{instruction} {words}")
    plan = prompts.build(LEVAL_PROFILE, q, "text with {instruction} and {words} and {}", True)
    assert plan.messages[1]["content"] == (
        "Document is as follows. text with {instruction} and {words} and {} Instruction: Who is {document}? "
        "The suggested output length is around 2 words. Output: ")


def test_edits_make_a_new_version_with_a_new_fingerprint():
    edited = LEVAL_PROFILE.with_edits(templates={"open": "Read: {document}\nTask: {instruction}"})
    assert edited.version == LEVAL_PROFILE.version + 1
    assert edited.fingerprint() != LEVAL_PROFILE.fingerprint()
    assert LEVAL_PROFILE.templates["open"] == prompts.LEVAL_TEMPLATES["open"]
    q = Question("financial_qa", "f1", "Why?", "Because.")
    assert prompts.build(edited, q, "D", False).messages[1]["content"] == "Read: D\nTask: Why?"
    assert edited.with_edits().fingerprint() == edited.fingerprint()  # same text, same hash


@pytest.mark.parametrize("templates,message", [
    ({"open": "no placeholders"}, "template 'open' must contain {document} exactly once"),
    ({"exam": "{document} {document} {instruction}"}, "template 'exam' must contain {document} exactly once"),
    ({"open_length": "{document} {instruction}"}, "template 'open_length' must contain {words} exactly once"),
    ({"open": "{document} {instruction} {words}"}, "template 'open' cannot use {words}"),
    ({"fact": "{instruction} {document}"}, "template 'fact' cannot use {document}"),
    ({"surprise": "{document}"}, "unknown prompt entries: surprise"),
])
def test_broken_edits_are_refused_with_the_entry_named(templates, message):
    with pytest.raises(ValueError, match=message.replace("{", r"\{").replace("}", r"\}").replace("(", r"\(")):
        LEVAL_PROFILE.with_edits(templates=templates)


# --- L-Eval's own data ------------------------------------------------------------------

def _task_files() -> dict[str, list[dict]]:
    root = require_shared() / "LEval-data"
    files = {}
    for path in sorted(root.glob("*/*.jsonl")):
        files[path.stem] = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return files


def _real_counter():
    counter = tokens.counter_for("gpt-3.5-turbo")
    if not counter.exact:
        pytest.skip(f"no offline cl100k_base for tiktoken: {counter.reason}")
    return counter


@pytest.mark.parametrize("counter_name", ["estimate", "tiktoken"])
@pytest.mark.parametrize("context", ["4k", "16k"])
def test_every_leval_task_file_matches_the_script(counter_name, context):
    files = _task_files()
    count = tokens.estimate_tokens if counter_name == "estimate" else _real_counter()
    max_length = ref.k_to_number(context) - ref.MAX_NEW_TOKENS
    for task, data in files.items():
        closed = task in ref.DATASETS_CLOSED_ENDED
        metric = "exam_eval" if closed else "ngram_eval"
        file_name = f"Predictions/{metric}/{MODEL}/{task}.pred.jsonl"
        expected = ref.run_file(metric, file_name, data, MODEL, max_length, count)
        assert_same(expected, ours(metric, task, data, max_length, count), f"{task} @ {context}")


@pytest.mark.parametrize("metric,evaluations", [
    ("human_eval", {"human"}), ("llm_gpt4_eval", {"LLM"}), ("llm_turbo_eval", {"human", "LLM"}),
])
def test_leval_subsets_match_the_script(metric, evaluations):
    files = _task_files()
    data = ref.subset_rows(metric, files)
    assert {d["evaluation"] for d in data} == evaluations
    expected = ref.run_file(metric, f"Predictions/{metric}/{MODEL}.pred.jsonl", data, MODEL, 15488,
                            tokens.estimate_tokens)
    actual = []
    for task in ref.DATASETS_OPEN_ENDED:
        actual += ours(metric, task, [d for d in files.get(task, []) if d["evaluation"] in evaluations],
                       15488, tokens.estimate_tokens)
    for e, a in zip(expected, actual):
        e["row"][f"{MODEL}_pred"] = a["row"][f"{MODEL}_pred"] = ""
    assert_same(expected, actual, metric)


def test_rows_rewritten_byte_for_byte_as_the_published_files():
    root = require_shared() / "Predictions"
    checked = 0
    for path in sorted(root.rglob("*.pred.jsonl")):
        text = path.read_text(encoding="utf-8")
        rows = [json.loads(line) for line in text.splitlines()]
        keys = list(rows[0])
        if len(keys) != 5 or keys[:3] != ["query", "gt", "prompt"] or keys[4] != "evaluation" or any(
                list(r) != keys for r in rows):
            continue  # written by other code (no prompt key, or gpt4-32k's own key order)
        system = keys[3][: -len(predfile.PRED_SUFFIX)]
        rebuilt = [predfile.pred_row(r["query"], r["gt"], r["prompt"], system, r[keys[3]], r["evaluation"])
                   for r in rows]
        expected = text if text.endswith("\n") else text + "\n"
        assert predfile.dumps_rows(rebuilt) == expected, path.name
        checked += 1
    assert checked >= 20
