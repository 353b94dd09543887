"""Exam exact match: each rule and each quirk, in the official and the fixed profile."""

from __future__ import annotations

import pytest

from app.core.metrics import aggregate, score_item
from app.core.metrics.exam import (
    code_answer, em_score, fixed_math_answer, fixed_option_letters, official_math_answer,
    official_option_letters, option_answer_letters,
)
from app.core.metrics.normalize import em_normalize

pytestmark = pytest.mark.database_free  # a pure core: the PostgreSQL pass leaves it out


def exam(task: str, prediction: str, answer: str, profile: str, index: int | None = None) -> float:
    return score_item(task, "exam", prediction, [answer], profile=profile, index=index)["exact_match"]


# --- the exact-match rule -------------------------------------------------------


def test_normalisation_removes_punctuation_and_lowercase_articles_but_keeps_case():
    assert em_normalize("The  cat, a dog!") == "The cat dog"
    assert em_normalize("A.B") == "AB"


@pytest.mark.parametrize("prediction, answer, expected", [
    ("ABC", "ABC", 1),
    ("AC", "ABC", 0.25),  # coursera's multi-answer rule: a subset of the right letters
    ("AD", "ABC", 0),
    ("B", "A", 0),
    ("3.0", "3", 1),  # numbers compare by value
    ("4", "3", 0),
    ("I think it was The History of kites here", "the history of kites", 1),  # lowercased, spaces removed
    ("something else", "the history of kites", 0),
])
@pytest.mark.parametrize("profile", ["official", "fixed"])
def test_em_rule(prediction, answer, expected, profile):
    assert em_score(prediction, answer, profile) == expected


@pytest.mark.parametrize("profile, expected", [("official", 0.25), ("fixed", 0)])
def test_empty_prediction_partial_credit(profile, expected):
    assert em_score("", "B", profile) == expected


def test_max_over_references_then_100_times():
    item = score_item("plain_exam", "exam", "42", ["41", "42.0"])
    assert item["exact_match"] == 100.0


# --- option letters -----------------------------------------------------------------


@pytest.mark.parametrize("response, official, fixed", [
    ("Based on the text, the answer is C.", "B", "C"),  # the first capital A-D is the B of "Based"
    ("(C) The ship sank at dawn.", "C", "C"),
    ("D) It rained all day", "D", "D"),
    ("C. seven bridges", "C", "C"),
    ("A man walks in.", "A", ""),  # the article is not an option in the fixed profile
    ("I do not know.", "A", ""),  # upstream's random guess
    ("   ", "None", ""),
    ("BC", "BC", ""),  # a substring of "ABCD" comes back whole; two letters are no single answer
])
def test_single_answer_letters(response, official, fixed):
    assert official_option_letters(response, multi_answer=False) == official
    assert fixed_option_letters(response, multi_answer=False) == fixed


@pytest.mark.parametrize("response, official, fixed", [
    ("A, B, C", "A", "ABC"),  # commas defeat the reference's capital-then-space rule
    ("B and D", "B", "BD"),  # a final letter with nothing after it is missed upstream
    ("ABCD", "ABCD", "ABCD"),
    ("DBA", "ABD", "ABD"),
    ("A. SUM\nB. COUNT\nD. MAX", "ABD", "ABD"),
    ("A. Plus sign (+) and B. Minus sign (-)", "AB", "AB"),
    ("Margins matter. So the answer is A.", "A", "A"),
    ("xDAy", "DA", ""),  # the reference's last-resort run of letters, unsorted
    ("Sorry, I cannot help.\nQuestion 2: C. maybe", "A", ""),  # text after "Question" is ignored
])
def test_coursera_letters(response, official, fixed):
    assert official_option_letters(response, multi_answer=True) == official
    assert fixed_option_letters(response, multi_answer=True) == fixed


def test_answer_letters_come_from_the_first_word():
    assert option_answer_letters("(D) Because he left") == "D"
    assert option_answer_letters("ACD") == "ACD"
    assert option_answer_letters("Because") == "B"  # any A-D letter of the first word counts
    assert option_answer_letters("Yes") == "A"  # upstream's fallback
    assert option_answer_letters("Yes", "fixed") == ""


@pytest.mark.parametrize("task, response, answer, official, fixed", [
    ("quality", "Based on the passage, the answer is C.", "(C) He left", 0.0, 100.0),
    ("quality", "I cannot tell.", "(A) Yes", 100.0, 0.0),  # the random guess scores
    ("tpo", "B. the colour of the walls", "B", 100.0, 100.0),
    ("coursera", "A, B, C", "ABC", 25.0, 100.0),
    ("coursera", "A, C, D", "AD", 25.0, 0.0),  # C is wrong, so no partial credit
    ("coursera", "AC", "ABC", 25.0, 25.0),
    ("coursera", "AD", "ABC", 0.0, 0.0),
])
def test_option_tasks(task, response, answer, official, fixed):
    assert exam(task, response, answer, "official") == official
    assert exam(task, response, answer, "fixed") == fixed


# --- gsm100 ------------------------------------------------------------------------------


@pytest.mark.parametrize("text, official, fixed", [
    ("So she earns $41.75.\nThe answer is $41.75.", "41", "41.75"),
    ("The answer is -3.5", "3", "-3.5"),  # signs and decimals are lost
    ("The answer is 1,000.", "1000", "1000"),
    ("The answer is $ 18.", "", "18"),  # only the next token is read
    ("the answer is 12 after 3 steps", "3", "12"),  # the phrase is case-sensitive upstream
    ("She has 5 apples and 7 pears.\n\nQuestion: next one has 99", "7", "7"),  # first paragraph only
])
def test_math_answer_extraction(text, official, fixed):
    assert official_math_answer(text) == official
    assert fixed_math_answer(text) == fixed


@pytest.mark.parametrize("response, answer, official, fixed", [
    ("The answer is $41.75.", "41", 100.0, 0.0),
    ("The answer is $ 18.", "18", 0.0, 100.0),
    ("The answer is 18.", "18", 100.0, 100.0),
    ("The answer is 18.00", "18", 100.0, 100.0),
])
def test_gsm100_rows(response, answer, official, fixed):
    assert exam("gsm100", response, answer, "official") == official
    assert exam("gsm100", response, answer, "fixed") == fixed


# --- codeU ------------------------------------------------------------------------------


def test_code_answer_cleaning():
    assert code_answer("[1, 2,\n 3]") == "[1 2 3]"
    assert code_answer("[[1, 2], [3, 4]]") == "[[1 2][3 4]]"
    assert code_answer("3.0") == code_answer("3.0", "fixed") == "3"
    assert code_answer("10.05") == "105"  # every ".0" goes upstream
    assert code_answer("10.05", "fixed") == "10.05"


@pytest.mark.parametrize("response, answer, official, fixed", [
    # "is" is removed inside "this" and "list" upstream, so the answer can never match.
    ("The final output is: this list", "this list", 0.0, 100.0),
    # A bare substring: "0" inside "10".
    ("So the final output is [4, 9, 10].", "0", 100.0, 0.0),
    # "The final output" with a capital T is missed upstream; the answer is then too far from the end.
    ("The final output is [3, 12] which holds the column totals of both columns of the matrix", "[3 12]", 0.0, 100.0),
    ("the result is printed as [1, 2, 3]", "[1 2 3]", 100.0, 100.0),
    # An answer of A-D letters falls under the option rule upstream and earns partial credit.
    ("C", "CD", 25.0, 0.0),
])
def test_codeu_rows(response, answer, official, fixed):
    assert exam("codeU", response, answer, "official") == official
    assert exam("codeU", response, answer, "fixed") == fixed


# --- topic_retrieval_longchat -----------------------------------------------------------


def test_topic_rows_are_grouped_by_index_mod_3_and_group_scores_rounded_upstream():
    # Group 0 gets 0 of 3 right, groups 1 and 2 get 2 of 3: 0, 66.67, 66.67.
    right = {1, 2, 4, 5}
    items = [score_item("topic_retrieval_longchat", "exam", "The history of kites" if i in right else "no idea",
                        ["The history of kites"], index=i) for i in range(9)]
    assert [item["group"] for item in items[:4]] == [0.0, 1.0, 2.0, 0.0]
    group_means = [0.0, 200 / 3, 200 / 3]
    official = aggregate("topic_retrieval_longchat", items)["exact_match"]
    assert official == round(sum(round(g, 4) for g in group_means) / 3, 4) == 44.4445
    fixed_items = [dict(item) for item in items]  # identical per-row scores in both profiles here
    assert aggregate("topic_retrieval_longchat", fixed_items, profile="fixed")["exact_match"] == 44.4444


# --- sci_fi ------------------------------------------------------------------------------


@pytest.mark.parametrize("response, answer, official, fixed", [
    ("True [fact: False]", "True [fact: False]", (100.0, 100.0), (100.0, 100.0)),
    ("True", "True [fact: False]", (0.0, 0.0), (100.0, 0.0)),  # no "[fact:": upstream crashes
    ("True [fact: false", "True [fact: False]", (100.0, 0.0), (100.0, 100.0)),  # last character lost
    ("untrue [fact: false]", "True [fact: False]", (100.0, 100.0), (0.0, 100.0)),  # "untrue" is "true"
])
def test_sci_fi_rows(response, answer, official, fixed):
    for profile, expected in (("official", official), ("fixed", fixed)):
        item = score_item("sci_fi", "exam", response, [answer], profile=profile)
        assert (item["loyalty"], item["fact"]) == expected
        assert item["exact_match"] == sum(expected) / 2


def test_sci_fi_file_score_is_the_mean_of_loyalty_and_fact():
    items = [score_item("sci_fi", "exam", p, ["True [fact: True]"]) for p in
             ("True [fact: True]", "True [fact: False]", "False [fact: False]")]
    # loyalty 2/3, fact 1/3 -> (66.6667 + 33.3333) / 2
    assert aggregate("sci_fi", items)["exact_match"] == 50.0
