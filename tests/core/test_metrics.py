"""Parity of the official profile with L-Eval's reference scripts, and the public API of app.core.metrics.

The parity tests read L-Eval's published predictions from ``../shared/leval``
(next to the repository) and are skipped when that folder is absent.
"""

from __future__ import annotations

import importlib.util
import json
import math
import warnings
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.shared import PREDICTIONS as SHARED_PREDICTIONS, SHARED_LEVAL, require_shared
from app.core.metrics import (
    METRIC_KEYS, PROFILES, QUIRKS, aggregate, describe_file, evaluate_file, evaluate_rows, resolve_profile,
    score_item,
)
from app.core.metrics.selection import NothingCounted

pytestmark = pytest.mark.database_free  # a pure core: the PostgreSQL pass leaves it out

LEVAL_ROOT, PREDICTIONS = SHARED_LEVAL, SHARED_PREDICTIONS


def _load_reference():
    # Loaded by path so the oracle works whatever pytest's import mode is.
    spec = importlib.util.spec_from_file_location("leval_reference", Path(__file__).parents[1] / "support" / "leval_reference.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


reference = _load_reference()


def _published_files() -> list:
    files = sorted(PREDICTIONS.glob("exam_eval/*/*.pred.jsonl")) + sorted(PREDICTIONS.glob("ngram_eval/*/*.pred.jsonl"))
    if not files:
        return [pytest.param(None, id="no-data")]  # the test then skips, or fails under CI=true
    return [pytest.param(path, id=f"{path.parent.parent.name}/{path.parent.name}/{path.name}") for path in files]


def _require(path: Path) -> Path:
    require_shared()
    return path


# --- parity ------------------------------------------------------------------------------

PUBLISHED = [
    ("ngram_eval/turbo-16k-0613/narrative_qa", "f1", 18.1989),
    ("ngram_eval/turbo-16k-0613/gov_report_summ", "rouge1", 45.9033),
    ("ngram_eval/turbo-16k-0613/gov_report_summ", "rouge2", 15.5985),
    ("ngram_eval/turbo-16k-0613/gov_report_summ", "rougeL", 23.636),
    ("ngram_eval/llama2-13b-chat-4k/meeting_summ", "rougeL", 19.6517),
    ("ngram_eval/vicuna-13b-16k/legal_contract_qa", "f1", 18.1696),
    ("exam_eval/gpt4-32k/coursera", "exact_match", 75.5814),
    ("exam_eval/Claude-100k/quality", "exact_match", 73.7624),
    ("exam_eval/turbo-16k-0613/gsm100", "exact_match", 84.0),
    ("exam_eval/Claude-100k/topic_retrieval_longchat", "exact_match", 70.6667),
    ("exam_eval/turbo-16k-0613/codeU", "exact_match", 12.2222),
]


@pytest.mark.parametrize("name, metric, expected", PUBLISHED)
def test_official_profile_reproduces_published_reference_values(name, metric, expected):
    path = _require(PREDICTIONS / f"{name}.pred.jsonl")
    assert evaluate_file(path)["metrics"][metric] == pytest.approx(expected, abs=0.01)


def test_all_57_published_files_are_present():
    require_shared()
    assert len(_published_files()) == 57


@pytest.mark.parametrize("path", _published_files())
def test_official_profile_matches_the_reference_scripts(path):
    if path is None:
        require_shared()
    # The oracle dispatches on path substrings like upstream, so give it the path below the data root.
    rouge_rows: list[dict] = []
    expected = reference.evaluate_pred_file(path, str(path.relative_to(LEVAL_ROOT)), rouge_rows)
    result = evaluate_file(path)
    assert result["n"] > 0
    for metric, value in expected.items():
        assert result["metrics"][metric] == pytest.approx(value, abs=0.01), metric
    if rouge_rows:
        # The fast ROUGE path must give rouge-score's floats exactly, row by row.
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        key = next(k for k in rows[0] if "_pred" in k)
        ours = [score_item(result["task"], "rouge", row[key], [row["gt"]]) for row in rows]
        assert [{k: item[k] for k in ("rouge1", "rouge2", "rougeL")} for item in ours] == rouge_rows


def test_human_and_llm_rows_are_refused_as_auto_eval_does_and_scored_for_the_analysis():
    path = _require(PREDICTIONS / "llm_turbo_eval" / "turbo-16k-0613.pred.jsonl")
    with pytest.raises(NothingCounted, match="96 'LLM', 85 'human'"):
        evaluate_file(path)
    result = evaluate_file(path, refuse=False)
    assert (result["task"], result["system"], result["n"], result["metrics"]) == (
        "llm_turbo_eval", "turbo-16k-0613", 0, {})
    assert result["analysis"]["n"] == 181
    assert set(result["analysis"]["metrics"]) == {"f1", "rouge1", "rouge2", "rougeL", "rouge_geo", "avg_words",
                                                  "delta_words"}


# --- score_item and aggregate ------------------------------------------------------------


@pytest.mark.parametrize("evaluation", ["human", "LLM", "llm"])
def test_score_item_for_human_and_llm_rows(evaluation):
    item = score_item("meeting_summ", evaluation, "the cat sat", ["the cat sat on the mat"])
    assert set(item) == {"f1", "rouge1", "rouge2", "rougeL", "rouge_geo", "pred_words", "ref_words"}
    assert item["rouge1"] == pytest.approx(100 * 2 * 1 * 0.5 / 1.5)
    assert item["rouge_geo"] == pytest.approx((item["rouge1"] * item["rouge2"] * item["rougeL"]) ** (1 / 3))
    assert (item["pred_words"], item["ref_words"]) == (3.0, 6.0)


def test_score_item_metric_groups():
    assert set(score_item("quality", "exam", "A", ["A"])) == {"exact_match", "pred_words", "ref_words"}
    assert set(score_item("narrative_qa", "f1", "a", ["a"])) == {"f1", "pred_words", "ref_words"}
    assert "rouge_geo" in score_item("news_summ", "rouge", "a", ["a"])


_TASKS_AND_EVALUATIONS = [
    ("coursera", "exam"), ("quality", "exam"), ("gsm100", "exam"), ("codeU", "exam"),
    ("topic_retrieval_longchat", "exam"), ("sci_fi", "exam"), ("my_exam", "exam"), ("narrative_qa", "f1"),
    ("news_summ", "rouge"), ("meeting_summ", "human"), ("cmrc_mixup_16k", "keyword_f1"),
    ("loogle_SD_mixup_32k", "keyword_f1"),
]


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(_TASKS_AND_EVALUATIONS), st.sampled_from(PROFILES), st.text(max_size=80),
       st.lists(st.text(max_size=60), min_size=1, max_size=3), st.one_of(st.none(), st.text(max_size=20)),
       st.integers(min_value=0, max_value=500))
def test_score_item_never_crashes_and_stays_on_the_0_100_scale(task_evaluation, profile, prediction, references,
                                                                gold_ans, index):
    task, evaluation = task_evaluation
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        item = score_item(task, evaluation, prediction, references, profile=profile, index=index,
                          extra={"gold_ans": gold_ans})
    scores = {k: v for k, v in item.items() if k not in ("pred_words", "ref_words", "group")}
    assert scores, item
    assert all(0.0 <= value <= 100.0 for value in scores.values()), item
    assert item["pred_words"] >= 0 and item["ref_words"] >= 0


def test_score_item_refuses_unknown_evaluations_and_profiles():
    with pytest.raises(ValueError, match="evaluation"):
        score_item("x", "bleu", "a", ["a"])
    with pytest.raises(ValueError, match="profile"):
        score_item("x", "f1", "a", ["a"], profile="lenient")


def test_profiles_and_the_paper_alias():
    assert PROFILES == ("official", "fixed")
    assert resolve_profile("paper") == "fixed"


def test_aggregate_rounds_to_4_decimals_and_keeps_only_applicable_keys():
    items = [score_item("narrative_qa", "f1", p, ["one two three"]) for p in ("one", "two three", "four")]
    metrics = aggregate("narrative_qa", items)
    assert list(metrics) == ["f1", "avg_words", "delta_words"]
    f1_one = 2 * 1 * (1 / 3) / (1 + 1 / 3)
    f1_two = 2 * 1 * (2 / 3) / (1 + 2 / 3)
    assert metrics["f1"] == round(100 * (f1_one + f1_two) / 3, 4)
    assert metrics["avg_words"] == round(4 / 3, 4)
    assert metrics["delta_words"] == round((4 - 9) / 3, 4)
    assert aggregate("narrative_qa", []) == {}


def test_quirks_are_documented_for_both_profiles():
    ids = [quirk["id"] for quirk in QUIRKS]
    assert len(ids) == len(set(ids))
    for quirk in QUIRKS:
        assert quirk["metric"] in METRIC_KEYS or quirk["metric"] == "*"
        assert quirk["official"] and quirk["fixed"]
    assert {"mc_first_capital", "gsm_signs_decimals", "lveval_blacklist_denominator"} <= set(ids)
    # auto_eval.py's reading and output, where both profiles depart from it.
    assert {"evaluation_exact_spelling", "last_row_metric", "refuse_uncounted_file", "bad_json_line",
            "prediction_key_per_row", "non_string_texts", "output_keys"} <= set(ids)


# --- rows and files ----------------------------------------------------------------------


def _write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def _leval_row(pred: str, gt: str, evaluation: str) -> dict:
    return {"query": "q", "gt": gt, "my-model_pred": pred, "evaluation": evaluation}


def test_evaluate_file_on_the_leval_folder_layout(tmp_path):
    path = _write_jsonl(tmp_path / "my-model" / "quality.pred.jsonl", [
        _leval_row("(B) yes", "(B) yes", "exam"),
        _leval_row("Based on it, C", "(C) no", "exam"),
    ])
    result = evaluate_file(path)
    assert result == {"file": str(path), "task": "quality", "system": "my-model", "profile": "official",
                      "n": 2, "skipped": 0, "evaluation": "exam", "metrics": result["metrics"],
                      "analysis": {"n": 2, "metrics": result["metrics"]}}
    assert result["metrics"]["exact_match"] == 50.0  # the second row reads "B" from "Based"
    assert evaluate_file(path, profile="fixed")["metrics"]["exact_match"] == 100.0


def test_rows_with_other_evaluations_are_skipped_and_an_override_scores_them(tmp_path):
    rows = [_leval_row("a b", "a b c", "f1"), _leval_row("x", "y", "pairwise")]
    result = evaluate_rows(rows, task="narrative_qa", system="m")
    assert (result["n"], result["skipped"]) == (1, 1)
    overridden = evaluate_rows(rows, task="narrative_qa", system="m", evaluation_override="rouge")
    assert overridden["n"] == 2 and "rougeL" in overridden["metrics"] and "f1" not in overridden["metrics"]
    with pytest.raises(ValueError):
        evaluate_rows(rows, task="narrative_qa", evaluation_override="bleu")


def test_describe_file_layouts(tmp_path):
    assert describe_file(tmp_path / "turbo" / "gsm100.pred.jsonl") == ("gsm100", "turbo")
    assert describe_file(tmp_path / "human_eval" / "claude-100k.pred.jsonl") == ("human_eval", "claude-100k")
    assert describe_file(tmp_path / "x" / "claude.pred.jsonl", [{"source": "news_summ"}]) == ("news_summ", "claude")
    assert describe_file(tmp_path / "x" / "claude.pred.jsonl", [{"source": "a"}, {"source": "b"}]) == ("mixed", "claude")
    assert describe_file(tmp_path / "glm" / "lic_mixup_128k.jsonl") == ("lic_mixup_128k", "glm")
    assert describe_file(tmp_path / "llm_eval" / "gpt-3.5-turbo.pred.jsonl") == ("llm_eval", "gpt-3.5-turbo")


def test_bad_files_are_refused_with_a_reason(tmp_path):
    broken = tmp_path / "m" / "narrative_qa.pred.jsonl"
    broken.parent.mkdir()
    broken.write_text(json.dumps(_leval_row("a", "a", "f1")) + "\n{not json\n", encoding="utf-8")
    with pytest.raises(ValueError, match="line 2"):
        evaluate_file(broken)
    foreign = _write_jsonl(tmp_path / "m" / "news_summ.pred.jsonl", [{"instructions": ["q"], "outputs": ["a"]}])
    with pytest.raises(ValueError, match="row 0"):
        evaluate_file(foreign)
    empty = _write_jsonl(tmp_path / "m" / "tpo.pred.jsonl", [])
    with pytest.raises(ValueError, match="no rows"):
        evaluate_file(empty)


def test_file_metrics_use_the_documented_keys_and_scale(tmp_path):
    path = _write_jsonl(tmp_path / "m" / "news_summ.pred.jsonl", [
        _leval_row("The cat sat on the mat today.", "A cat sat on a mat.", "rouge"),
        _leval_row("Nothing in common.", "A cat sat on a mat.", "rouge"),
    ])
    for profile in PROFILES:
        metrics = evaluate_file(path, profile=profile)["metrics"]
        assert list(metrics) == [key for key in METRIC_KEYS if key in metrics]
        assert set(metrics) == {"rouge1", "rouge2", "rougeL", "rouge_geo", "avg_words", "delta_words"}
        assert all(0 <= metrics[k] <= 100 for k in ("rouge1", "rouge2", "rougeL", "rouge_geo"))
        assert all(round(v, 4) == v and math.isfinite(v) for v in metrics.values())
