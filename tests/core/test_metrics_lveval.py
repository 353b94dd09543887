"""LV-Eval keyword-recall F1: hand-made English and Chinese cases for each rule, in both profiles.

Expected values are worked out by hand in the comments: F1 = 2PR / (P + R).
"""

from __future__ import annotations

import json

import pytest

from app.core.metrics import KeywordWarning, evaluate_file, evaluate_rows, keyword_f1, score_item
from app.core.metrics.lveval import dataset_name, dataset_settings, tokens_en, tokens_zh

pytestmark = pytest.mark.database_free  # a pure core: the PostgreSQL pass leaves it out


def f1(precision: float, recall: float) -> float:
    return 2 * precision * recall / (precision + recall)


# --- tokenisation ------------------------------------------------------------------


def test_english_tokens_are_lowercased_without_punctuation_or_articles():
    assert tokens_en("The Eiffel Tower, in Paris!") == ["eiffel", "tower", "in", "paris"]


def test_chinese_tokens_come_from_jieba_with_punctuation_and_empty_pieces_dropped():
    assert tokens_zh("我爱北京天安门。") == ["我", "爱", "北京", "天安门"]
    assert tokens_zh("北京 上海") == ["北京", "上海"]  # the space becomes an empty piece, then goes


def test_dataset_name_strips_the_length_suffix_and_picks_language_and_gate():
    assert dataset_name("multifieldqa_zh_mixup_64k") == "multifieldqa_zh_mixup"
    assert dataset_settings("cmrc_mixup_16k") == ("zh", True)
    assert dataset_settings("factrecall_en_256k") == ("en", False)
    assert dataset_settings("my_new_set", "答案") == ("zh", True)


# --- English --------------------------------------------------------------------------


@pytest.mark.parametrize("profile, expected", [
    # keywords: ada, lovelace, london, mathematician -> 1 of 4 recalled = 0.25.
    # Code gate 0.2 passes; F1 against the answer "ada lovelace": P = 1/1, R = 1/2.
    ("official", f1(1.0, 0.5)),
    # Paper gate 0.4 fails.
    ("fixed", 0.0),
])
def test_english_recall_threshold(profile, expected):
    score = keyword_f1("Lovelace", "Ada Lovelace", "Ada Lovelace London mathematician", language="en",
                       profile=profile)
    assert score == pytest.approx(expected)


def test_english_gate_passes_exactly_at_the_threshold():
    # 1 of 5 keywords recalled = 0.2, not below the code's 0.2.
    score = keyword_f1("alpha", "alpha", "alpha beta gamma delta epsilon", language="en")
    assert score == pytest.approx(1.0)


@pytest.mark.parametrize("profile, expected", [
    # keywords he, and, she, met, in, paris: "paris" recalled, 1/6 = 0.167 < 0.2.
    ("official", 0.0),
    # Blacklisted he/and/she/in leave the denominator: 1/2 = 0.5 >= 0.4; then F1 of
    # [paris] against the blacklist-filtered answer [met, paris]: P = 1, R = 1/2.
    ("fixed", f1(1.0, 0.5)),
])
def test_english_blacklisted_keywords_in_the_denominator(profile, expected):
    score = keyword_f1("paris", "he and she met in paris", "he and she met in paris", language="en",
                       profile=profile)
    assert score == pytest.approx(expected)


@pytest.mark.parametrize("profile", ["official", "fixed"])
def test_english_blacklisted_matches_do_not_count_as_recall(profile):
    # Only "in" matches, and it is blacklisted: recall 0.
    assert keyword_f1("in london", "in paris", "in paris", language="en", profile=profile) == 0.0


@pytest.mark.parametrize("profile, expected", [
    # No keywords: English skips the gate.  Answer tokens he, was, in, paris: P = 1, R = 1/4.
    ("official", f1(1.0, 0.25)),
    # Paper: the answer loses he/was/in, leaving [paris]: F1 = 1.
    ("fixed", 1.0),
])
def test_english_missing_gold_ans_skips_the_gate_and_f1_blacklist(profile, expected):
    assert keyword_f1("Paris", "He was in Paris", None, language="en", profile=profile) == pytest.approx(expected)
    assert keyword_f1("Paris", "He was in Paris", "", language="en", profile=profile) == pytest.approx(expected)


@pytest.mark.parametrize("profile", ["official", "fixed"])
@pytest.mark.parametrize("keywords", ["The", "!!!", "a an the"])
def test_english_keywords_normalising_to_nothing_score_zero_with_a_warning(profile, keywords):
    with pytest.warns(KeywordWarning):
        assert keyword_f1("the answer", "the answer", keywords, language="en", profile=profile) == 0.0


def test_english_all_blacklisted_keywords_keep_their_length_in_the_fixed_denominator():
    # Keywords "he was": both blacklisted, so nothing can be recalled: 0 in both profiles.
    for profile in ("official", "fixed"):
        assert keyword_f1("he was", "he was", "he was", language="en", profile=profile) == 0.0


def test_english_gate_failure_scores_zero_even_with_a_perfect_answer():
    assert keyword_f1("Paris", "Paris", "London", language="en") == 0.0


# --- Chinese --------------------------------------------------------------------------


@pytest.mark.parametrize("profile, expected", [
    # keywords 北京, 上海, 广州: 1 of 3 = 0.333 < the code's 0.4.
    ("official", 0.0),
    # Paper threshold 0.2 passes; F1 of [北京] against [北京, 上海]: P = 1, R = 1/2.
    ("fixed", f1(1.0, 0.5)),
])
def test_chinese_recall_threshold(profile, expected):
    score = keyword_f1("北京", "北京 上海", "北京 上海 广州", language="zh", profile=profile)
    assert score == pytest.approx(expected)


@pytest.mark.parametrize("profile, expected", [
    # keywords 的, 和, 北京: 1 of 3 = 0.333 < 0.4.
    ("official", 0.0),
    # 的/和 leave the denominator: 1/1 >= 0.2; answer [的, 北京] loses 的: F1 = 1.
    ("fixed", 1.0),
])
def test_chinese_blacklisted_keywords_in_the_denominator(profile, expected):
    assert keyword_f1("北京", "的 北京", "的 和 北京", language="zh", profile=profile) == pytest.approx(expected)


@pytest.mark.parametrize("profile, expected", [
    # No gold_ans: the answer 北京 上海 广州 深圳 becomes the keywords; 1 of 4 = 0.25.
    ("official", 0.0),  # 0.25 < 0.4
    ("fixed", f1(1.0, 0.25)),  # 0.25 >= 0.2; P = 1, R = 1/4
])
def test_chinese_missing_gold_ans_uses_the_answer_as_keywords(profile, expected):
    assert keyword_f1("北京", "北京 上海 广州 深圳", None, language="zh", profile=profile) == pytest.approx(expected)


@pytest.mark.parametrize("profile, expected", [
    # Keywords = answer 北京, 的, 上海: 2/3 recalled.  F1 of [北京, 上海] vs [北京, 的, 上海]: P = 1, R = 2/3.
    ("official", f1(1.0, 2 / 3)),
    # 的 is removed from the answer before F1: a perfect match.
    ("fixed", 1.0),
])
def test_chinese_final_f1_and_the_blacklist(profile, expected):
    assert keyword_f1("北京 上海", "北京 的 上海", None, language="zh", profile=profile) == pytest.approx(expected)


@pytest.mark.parametrize("profile", ["official", "fixed"])
def test_chinese_keywords_normalising_to_nothing_score_zero_with_a_warning(profile):
    with pytest.warns(KeywordWarning):
        assert keyword_f1("北京", "北京", "，。！", language="zh", profile=profile) == 0.0


def test_chinese_punctuation_pieces_are_dropped():
    # jieba yields 北京 and the full-width mark; the mark normalises to "" and is dropped.
    assert keyword_f1("北京！", "北京。", "北京", language="zh") == pytest.approx(1.0)


def test_unknown_language_is_refused():
    with pytest.raises(ValueError):
        keyword_f1("a", "a", language="fr")


# --- rows and files ---------------------------------------------------------------------


def _row(pred: str, answer: str, gold: str | None) -> dict:
    return {"pred": pred, "answers": [answer, "ignored second answer"], "gold_ans": gold, "length": 16000}


def test_lveval_rows_score_the_first_answer_and_average_on_the_0_100_scale():
    rows = [
        _row("Lovelace", "Ada Lovelace", "Ada Lovelace London mathematician"),  # F1 2/3 under the code gate
        _row("Paris", "London", "London"),  # gate fails: 0
    ]
    result = evaluate_rows(rows, task="hotpotwikiqa_mixup_16k", system="m")
    assert result["n"] == 2
    assert result["metrics"]["keyword_f1"] == pytest.approx(round(100 * (f1(1.0, 0.5) + 0) / 2, 4))
    fixed = evaluate_rows(rows, task="hotpotwikiqa_mixup_16k", system="m", profile="paper")
    assert fixed["profile"] == "fixed"
    assert fixed["metrics"]["keyword_f1"] == 0.0


def test_factrecall_is_not_gated():
    item = score_item("factrecall_en_16k", "keyword_f1", "Paris", ["Paris"], extra={"gold_ans": "London"})
    assert item["keyword_f1"] == pytest.approx(100.0)


def test_dureader_is_scored_with_lvevals_rouge_l():
    # 和 is blacklisted, so both sides are [北京, 上海]; the rouge package's F carries a 1e-8.
    item = score_item("dureader_mixup_16k", "keyword_f1", "北京上海", ["北京和上海"])
    assert "keyword_f1" not in item
    assert item["lveval_raw"] == 2.0 * ((1.0 * 1.0) / (1.0 + 1.0 + 1e-8))
    assert score_item("dureader_mixup_16k", "keyword_f1", "北京上海", ["北京和上海"], profile="fixed")["lveval_raw"] == 1.0


def test_lveval_prediction_file_layout(tmp_path):
    folder = tmp_path / "chatglm3-6b"
    folder.mkdir()
    path = folder / "cmrc_mixup_32k.jsonl"
    rows = [_row("北京", "北京 上海 广州", "北京 上海 广州"), _row("我去了北京", "北京", "北京")]
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n", encoding="utf-8")
    result = evaluate_file(path)
    assert (result["task"], result["system"], result["n"]) == ("cmrc_mixup_32k", "chatglm3-6b", 2)
    # Row 1: 1/3 < 0.4 -> 0.  Row 2: keyword recalled; F1 of [我, 去, 了, 北京] vs [北京]: P = 1/4, R = 1.
    assert result["metrics"]["keyword_f1"] == pytest.approx(round(100 * f1(0.25, 1.0) / 2, 4))
