"""The evidence profile's pure parts (app/core/evidence.py): reading replies in JSON or the text format, the
reply schema, fitting the document, flags and the run summary."""
from __future__ import annotations

import json

import pytest

from app.core.evidence import (
    Quote,
    Rated,
    check_quotes,
    fit_document,
    is_flagged,
    rating_format,
    read_score,
    read_verdict,
    summarise,
    verdict_format,
)
from app.core.generation.tokens import estimate_tokens
from app.core.judge.profiles import EVIDENCE, PROFILES
from app.core.quotes import DocumentIndex
from app.core.rater import EvidenceOptions, parse_score

pytestmark = pytest.mark.database_free

DOCUMENT = "In 1998 the board resigned. It did not meet again, and the river kept rising through May."


def rating(reply):
    return EvidenceOptions(max_quotes=2).parse(reply)


def test_a_json_rating_with_its_quotes_even_in_a_code_fence():
    reply = json.dumps({"reasoning": "x", "score": 4, "quotes": [
        {"quote": "the board resigned", "stance": "supports"}, {"quote": "It did not meet", "stance": "contradicts"},
        {"quote": "a third one", "stance": "supports"}]})
    parsed = rating("Here it is:\n```json\n" + reply + "\n```")
    assert parsed.decision == 4 and parsed.form == "json"
    assert parsed.quotes == (Quote("", "supports", "the board resigned"), Quote("", "contradicts", "It did not meet"))


@pytest.mark.parametrize("reply, score, quotes", [
    ('QUOTE supports: "the board resigned"\nQUOTE contradicts: the river\nRating: [[5]]', 5, 2),
    ("No quotes, but [[2]]", 2, 0),
    ('{"score": 9, "quotes": []} and later [[3]]', 3, 0),  # a JSON score out of range: the text form decides
    ("QUOTE supports: the board resigned", None, None),  # quotes without a rating: no decision, an error row
    ("", None, None),
])
def test_the_text_format_and_replies_without_a_rating(reply, score, quotes):
    parsed = rating(reply)
    assert (parsed.decision if parsed else None) == score
    if parsed:
        assert len(parsed.quotes) == quotes and parsed.form == "text"
    assert (EvidenceOptions().check(reply) is None) == (score is not None)


def test_a_judges_quotes_name_their_answer_and_at_most_n_per_answer_are_kept():
    reply = json.dumps({"reasoning": "", "verdict": "b", "quotes": [
        {"answer": "A", "quote": "one", "stance": "supports"}, {"answer": "A", "quote": "two", "stance": "supports"},
        {"answer": "A", "quote": "three", "stance": "supports"}, {"answer": "B", "quote": "four", "stance": "odd"},
        {"answer": "Z", "quote": "five", "stance": "supports"}]})
    profile = PROFILES[EVIDENCE]
    assert profile.parse(reply) == "B"
    quotes = profile.quotes(reply)
    assert [(q.answer, q.text, q.stance) for q in quotes] == [("A", "one", "supports"), ("A", "two", "supports"),
                                                             ("A", "three", "supports"), ("B", "four", "supports")]
    assert profile.parse("QUOTE B contradicts: x\n[[C]] then [[A]]") == "A"
    assert profile.quotes("QUOTE B contradicts: x\n[[A]]") == (Quote("B", "contradicts", "x"),)
    assert profile.parse("QUOTE B contradicts: x") is None


def test_the_schemas_are_strict_and_bound_the_quotes():
    rating_schema = rating_format(3)["json_schema"]
    assert rating_schema["strict"] and rating_schema["schema"]["properties"]["quotes"]["maxItems"] == 3
    assert rating_schema["schema"]["properties"]["score"]["enum"] == [1, 2, 3, 4, 5]
    verdict_schema = verdict_format(2)["json_schema"]["schema"]
    assert verdict_schema["properties"]["quotes"]["maxItems"] == 4
    assert verdict_schema["properties"]["quotes"]["items"]["properties"]["answer"]["enum"] == ["A", "B"]
    assert read_score(True) is None and read_score("4") == 4 and read_verdict(" c ") == "C"
    assert parse_score("[[4]]") == 4


def test_the_document_is_cut_to_the_context_beside_the_prompt_and_the_reply():
    text = " ".join(f"word{i}" for i in range(3000))
    cut = fit_document(text, estimate_tokens, context_tokens=3000, reply_tokens=1000, prompt_tokens=500)
    assert cut.cut and estimate_tokens(cut.text) <= 1500 and text.startswith(cut.text)
    whole = fit_document("short text", estimate_tokens, context_tokens=3000, reply_tokens=1000, prompt_tokens=500)
    assert not whole.cut and whole.text == "short text"
    with pytest.raises(ValueError):
        fit_document(text, estimate_tokens, context_tokens=1000, reply_tokens=1000, prompt_tokens=1)


def test_flags_shares_and_clusters_with_and_without_flagged_decisions():
    index = DocumentIndex(DOCUMENT)
    good = tuple(check_quotes(index, [Quote("", "supports", "1998 the board resigned"),
                                      Quote("", "supports", "THE RIVER KEPT RISING")]))
    mixed = tuple(check_quotes(index, [Quote("", "supports", "In 1998 the board resigned"),
                                       Quote("", "supports", "In 1997 the board resigned")]))
    invented = tuple(check_quotes(index, [Quote("", "contradicts", "the zebra council met at midnight")]))
    assert [q["status"] for q in good] == ["exact", "close"] and mixed[1]["start"] is None
    assert not is_flagged(good) and not is_flagged(mixed) and is_flagged(invented) and not is_flagged(())
    decisions = [Rated("a", 10, good), Rated("a", 40, mixed), Rated("b", 90, invented), Rated("b", 20, ())]
    summary = summarise(decisions)
    assert (summary["decisions"], summary["quotes"], summary["flagged"], summary["left_out"]) == (4, 5, 1, 0)
    assert (summary["exact"], summary["close"], summary["unsupported"]) == (2, 1, 2)
    assert summary["unsupported_share"] == pytest.approx(2 / 5)
    assert summary["resting_on_unsupported"] == 2 and summary["resting_on_unsupported_share"] == pytest.approx(0.5)
    by_system = {row["system"]: row for row in summary["per_system"]}
    assert by_system["b"]["unsupported_share"] == 1.0 and by_system["a"]["unsupported_share"] == pytest.approx(0.25)
    length = summary["by_length"]
    assert length["n"] == 3 and length["median_chars"] == 40
    assert length["shorter_share"] == pytest.approx(1 / 4) and length["longer_share"] == 1.0 and length["rho"] > 0
    out = summarise(decisions, leave_out_flagged=True)
    assert out["leave_out_flagged"] and (out["decisions"], out["left_out"], out["flagged"]) == (3, 1, 1)
    assert out["unsupported"] == 1 and out["resting_on_unsupported_share"] == pytest.approx(1 / 3)


def test_the_judges_evidence_options_ask_keep_and_key_as_set():
    """The judge's profile with its run's options: the quote limit asked for and kept, the JSON schema on or off,
    and a cache key that changes only for options other than the defaults (older judgments stay found)."""
    from app.core.judge.profiles import DEFAULT, EVIDENCE, get_profile
    from app.core.judge.prompt import EVIDENCE_TEMPLATE, PairItem, render_pair

    base = get_profile(EVIDENCE)
    same = base.with_evidence_options(3, True)
    one = base.with_evidence_options(1, False)
    assert same.prompt_key(EVIDENCE_TEMPLATE) == base.prompt_key(EVIDENCE_TEMPLATE)
    assert one.prompt_key(EVIDENCE_TEMPLATE) != base.prompt_key(EVIDENCE_TEMPLATE)
    assert one.response_format is None and same.response_format == base.response_format
    reply = json.dumps({"reasoning": "", "verdict": "A", "quotes": [
        {"answer": "A", "quote": f"passage {i}", "stance": "supports"} for i in range(3)]})
    assert len(same.quotes(reply)) == 3 and len(one.quotes(reply)) == 1 and one.parse(reply) == "A"
    item = PairItem(1, "q", "r", "a", "b", "the document", "key")
    assert "up to 1 verbatim" in render_pair(EVIDENCE_TEMPLATE, item, "AB", one.max_quotes)[0]["content"]
    assert get_profile(DEFAULT).with_evidence_options(1, False) is get_profile(DEFAULT)
