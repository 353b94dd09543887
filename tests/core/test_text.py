"""The pure text rules: a document's title, and the preamble a document's questions share."""
from __future__ import annotations

import json

import pytest

from app.core.text import document_title, shared_lead, title_line
from tests.support.shared import HUMAN_EVAL

pytestmark = pytest.mark.database_free  # a pure core: the PostgreSQL pass leaves it out


@pytest.mark.parametrize("text, expected", [
    ("Title: The Lighthouse Keeper\nAuthor: Someone\n\nChapter 1", "The Lighthouse Keeper"),
    ("Moonbase Alpha ( TV series ) - wikipedia <H1> Moonbase Alpha </H1> This article", "Moonbase Alpha ( TV series )"),
    ("Good day, and welcome to the Acme Widgets Third Quarter 2031 Earnings Conference Call. All lines are muted.",
     "Acme Widgets Third Quarter 2031 Earnings Conference Call"),
    ("Operator speaking.\nGreetings and welcome to Northwind's Fiscal 2030 Results Call. Please stand by.",
     "Northwind's Fiscal 2030 Results Call"),
    ("THE GLASS ORCHARD\n\nBy MARA QUILL\n\nIt rained.", "THE GLASS ORCHARD"),
    ("The Salt Road, by A. N. Author [1901]\nSome background.", "The Salt Road, by A. N. Author [1901]"),
    ("Exhibit 9.9 WIDGET DISTRIBUTION AGREEMENT (the \"Agreement\") is made", "WIDGET DISTRIBUTION AGREEMENT"),
    ("RIVERTON SCHOOL BOARD – SPECIAL SESSION. Monday 3 May. Transcript by the clerk.",
     "RIVERTON SCHOOL BOARD – SPECIAL SESSION"),
    ("Coastal Dunes After the Storm: A Field Survey, 2030\n\nPrepared by the survey team.",
     "Coastal Dunes After the Storm: A Field Survey, 2030"),
])
def test_a_stated_title_is_found(text, expected):
    assert title_line(text) == expected
    assert document_title(text, "some_task", 3) == expected


@pytest.mark.parametrize("text", [
    "Grad H: st\nGrad F: So we're on.\n",                      # a speaker's turn
    "Professor B: I think for two years we were away\n",
    "Produced by Some Volunteers and the Online\nDistributed Proofreading Team\n",
    "Introduction\n\nLanguage identification is the first step.",  # a section heading
    "1 INTRODUCTION\nOut-of-distribution detection aims",
    "FIELD OF THE INVENTION\n\nThe invention relates to oats.",
    "[Scene: A hospital corridor]\nPhoebe: Hi.",
    "Review #0: We stayed here on a layover and it was great.",
    "What is income-driven repayment?\nIt lowers payments.",
    "Question: Four adults went to the dentist.\nLet's think step by step",
    "",
    "\n\n   \n",
])
def test_a_first_line_that_is_not_a_title_gives_the_task_and_number(text):
    assert title_line(text) is None
    assert document_title(text, "meeting_summ", 2) == "meeting_summ · document 2"


def test_long_titles_are_cut_on_a_word():
    title = document_title("Title: " + "word " * 40, "t", 1)
    assert title.endswith("…") and len(title) <= 91 and " wor…" not in title


def test_shared_preamble_is_dropped_only_when_it_tells_questions_apart():
    lead = "You are asked to act as a member of the Results Call and answer the question: "
    questions = [lead + "What was revenue?", lead + "What   are the plans?", lead + "Who spoke first?"]
    cut = shared_lead(questions)
    assert cut == len(lead) and [" ".join(q.split())[cut:] for q in questions] == [
        "What was revenue?", "What are the plans?", "Who spoke first?"]
    assert shared_lead([lead + "Only one?"]) == 0                              # nothing to tell apart
    assert shared_lead(["What did A say?", "What did B say?"]) == 0            # too short to matter
    assert shared_lead([lead + "Same?", lead + "Same?"]) == 0                  # identical: keep them whole
    assert shared_lead([lead + "Why?", lead + "Why? And how?"]) == 0            # one starts the other
    assert shared_lead([lead.strip(), lead + "More?"]) == 0


def test_no_title_of_the_human_evaluation_subset_is_a_speaker_turn_or_a_credit_line(shared_leval):
    """On L-Eval's own 85-question subset (read from ../shared at test time)."""
    rows = [json.loads(line) for line in (HUMAN_EVAL / "claude.gpt4.ref.jsonl").read_text(encoding="utf-8").splitlines()]
    numbers: dict[str, int] = {}
    titles = []
    for row in rows:
        numbers[row["source"]] = numbers.get(row["source"], 0) + 1
        titles.append(document_title(row["input"], row["source"], numbers[row["source"]]))
    assert len(set(titles)) == len(titles)
    for title in titles:
        assert not title.startswith(("Grad ", "Professor ", "PhD ", "Produced by", "Review #")), title
    financial = [t for t, row in zip(titles, rows) if row["source"] == "financial"]
    assert financial and all(t.endswith("Call") for t in financial), financial


def test_a_search_needs_every_word_in_any_script():
    from app.core.text import matches_search, search_terms

    assert search_terms("  The  Company\tREVENUE ") == ["the", "company", "revenue"]
    assert search_terms("ＡＢＣ 灯塔") == ["abc", "灯塔"]  # full-width letters read as ASCII (NFKC)
    assert matches_search(search_terms("revenue company"), "The company's revenue rose.")
    assert not matches_search(search_terms("revenue profit"), "The company's revenue rose.")
    assert matches_search(search_terms("看守人"), "灯塔的看守人记下了十四位访客。")
    assert not matches_search(search_terms("看守人 灯笼"), "灯塔的看守人记下了十四位访客。")
    assert matches_search(search_terms(""), "anything") and matches_search([], None)
    assert len(search_terms(" ".join(f"w{i}" for i in range(20)))) == 8


def test_names_that_may_be_one_model():
    from app.core.text import lookalike_groups, name_key

    assert name_key("Claude-100k") == name_key("claude_100k") == name_key("CLAUDE 100K") == "claude-100k"
    assert name_key("通义千问-7B") == name_key("通义千问_7b")
    assert lookalike_groups(["Claude-100k", "claude-100k", "gpt4-32k", "vicuna-13b-16k", "vicuna-13b-16k-flash"]) == [
        ["Claude-100k", "claude-100k"]]
    assert lookalike_groups(["通义千问-7B", "通义千问_7b", "通义千问-14B"]) == [["通义千问-7B", "通义千问_7b"]]
