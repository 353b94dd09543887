"""Token F1, ROUGE and length: rules, the fast ROUGE path against rouge-score, and the fixed profile's CJK handling."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rouge_score import rouge_scorer
from rouge_score import tokenize as rouge_tokenize

from app.core.metrics import aggregate, score_item
from app.core.metrics.f1 import best_f1, f1_tokens, token_f1
from app.core.metrics.length import word_count
from app.core.metrics.normalize import rouge_tokens_ascii
from app.core.metrics.rouge import best_rouge, lcs_length, package_rouge, rouge_tokens

pytestmark = pytest.mark.database_free  # a pure core: the PostgreSQL pass leaves it out

# --- token F1 -----------------------------------------------------------------------------


def test_f1_normalises_case_punctuation_and_articles():
    assert f1_tokens("The Cat, a DOG!") == ["cat", "dog"]


@pytest.mark.parametrize("prediction, reference, expected", [
    ("The cat sat.", "a cat sat down", 2 * 1 * (2 / 3) / (1 + 2 / 3)),  # P = 2/2, R = 2/3
    ("dog dog cat", "dog cat cat", 2 / 3),  # multiset overlap is 2, not 3
    ("nothing shared", "cat", 0.0),
    ("", "cat", 0.0),
])
@pytest.mark.parametrize("profile", ["official", "fixed"])
def test_token_f1(prediction, reference, expected, profile):
    assert token_f1(prediction, reference, profile) == pytest.approx(expected)


def test_f1_takes_the_best_reference_on_the_0_100_scale():
    assert best_f1("cat", ["dog", "the cat"]) == 100.0
    with pytest.raises(ValueError):
        best_f1("cat", [])


@pytest.mark.parametrize("prediction, reference, official, fixed", [
    ("“yes”", "yes", 0.0, 1.0),  # curly quotes are not ASCII punctuation
    ("我爱北京", "北京", 0.0, 0.5),  # one token upstream; jieba gives 我/爱/北京: P = 1/3, R = 1
])
def test_f1_unicode_quirk(prediction, reference, official, fixed):
    assert token_f1(prediction, reference, "official") == pytest.approx(official)
    assert token_f1(prediction, reference, "fixed") == pytest.approx(fixed)


# --- ROUGE tokenisation and LCS -------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_ascii_tokenizer_matches_rouge_score(text):
    assert rouge_tokens_ascii(text) == rouge_tokenize.tokenize(text, None)


def _lcs_table_length(a: list[str], b: list[str]) -> int:
    previous = [0] * (len(b) + 1)
    for x in a:
        current = [0]
        for j, y in enumerate(b):
            current.append(previous[j] + 1 if x == y else max(previous[j + 1], current[j]))
        previous = current
    return previous[-1]


_TOKENS = st.lists(st.sampled_from(["a", "b", "c", "d", "e"]), max_size=70)


@settings(max_examples=400, deadline=None)
@given(_TOKENS, _TOKENS)
def test_bit_parallel_lcs_matches_the_dynamic_programming_table(a, b):
    assert lcs_length(a, b) == _lcs_table_length(a, b)


_WORDS = st.lists(st.sampled_from(["the", "cat", "sat", "on", "mat", "Dog", "ran.", "42", "x-y", "é"]), max_size=40)


@settings(max_examples=200, deadline=None)
@given(_WORDS, st.lists(_WORDS, min_size=1, max_size=3))
def test_fast_rouge_equals_the_rouge_score_package(prediction_words, reference_word_lists):
    prediction = " ".join(prediction_words)
    references = [" ".join(words) for words in reference_word_lists]
    assert best_rouge(prediction, references) == package_rouge(prediction, references)


def test_rouge_on_a_worked_example():
    # Reference tokens: the cat sat on the mat (6); prediction: the cat on the mat (5).
    # rouge1 overlap 5: P = 5/5, R = 5/6.  rouge2 bigrams shared: "the cat", "on the", "the mat" = 3:
    # P = 3/4, R = 3/5.  LCS = 5: same as rouge1.
    scores = best_rouge("The cat on the mat", ["the cat sat on the mat"])
    f = lambda p, r: 100 * 2 * p * r / (p + r)  # noqa: E731
    assert scores["rouge1"] == pytest.approx(f(1, 5 / 6))
    assert scores["rouge2"] == pytest.approx(f(3 / 4, 3 / 5))
    assert scores["rougeL"] == pytest.approx(f(1, 5 / 6))


def test_rouge_takes_the_max_over_references_separately_per_type():
    # Against "d c b a" every unigram matches but the LCS is 1; against "a b x y" both give 2 of 4.
    scores = best_rouge("a b c d", ["d c b a", "a b x y"])
    assert scores["rouge1"] == 100.0  # from the first reference
    assert scores["rougeL"] == 50.0  # from the second


def test_file_rouge_summary_is_the_geometric_mean_of_the_averages():
    items = [{"rouge1": 100.0, "rouge2": 1.0, "rougeL": 100.0}, {"rouge1": 1.0, "rouge2": 100.0, "rougeL": 1.0}]
    metrics = aggregate("news_summ", items)
    assert metrics["rouge1"] == metrics["rouge2"] == metrics["rougeL"] == 50.5
    assert metrics["rouge_geo"] == 50.5  # the mean of per-row geometric means would be about 13.1


@pytest.mark.parametrize("prediction, reference, official, fixed", [
    ("我爱北京天安门", "我爱北京天安门", 0.0, 100.0),  # no [a-z0-9] at all: Chinese scores 0
    ("naïve", "na ve", 100.0, 0.0),  # "ï" becomes a separator, so the two texts look identical
])
def test_rouge_non_ascii_quirk(prediction, reference, official, fixed):
    assert best_rouge(prediction, [reference])["rougeL"] == official
    assert best_rouge(prediction, [reference], "fixed")["rougeL"] == fixed


def test_rouge_tokens_per_profile():
    assert rouge_tokens("我爱北京天安门", "official") == []
    assert rouge_tokens("我爱北京天安门", "fixed") == ["我", "爱", "北京", "天安门"]
    assert rouge_tokens("Café au lait_2", "official") == ["caf", "au", "lait", "2"]
    assert rouge_tokens("Café au lait_2", "fixed") == ["café", "au", "lait", "2"]


def test_fixed_rouge_matches_the_package_on_ascii_text():
    prediction, reference = "The quick brown fox, 42 times.", "A quick brown dog jumps 42 times"
    assert best_rouge(prediction, [reference], "fixed") == package_rouge(prediction, [reference])


def test_package_rouge_really_calls_rouge_score():
    scorer = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=False)
    expected = scorer.score("a b c", "a c").get("rougeL").fmeasure * 100
    assert package_rouge("a c", ["a b c"])["rougeL"] == expected


# --- length -----------------------------------------------------------------------------


def test_word_counts():
    assert word_count("hello  world\nagain") == 3
    assert word_count("我爱北京 ok") == 2
    assert word_count("我爱北京 ok", "fixed") == 5  # four Han characters and one word


def test_length_bias_per_file():
    items = [score_item("news_summ", "rouge", "one two three four", ["one two"]),
             score_item("news_summ", "rouge", "one", ["one two three"])]
    metrics = aggregate("news_summ", items)
    assert metrics["avg_words"] == 2.5  # (4 + 1) / 2
    assert metrics["delta_words"] == 0.0  # ((4 - 2) + (1 - 3)) / 2
