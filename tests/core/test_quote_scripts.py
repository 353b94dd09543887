"""Quote verification in scripts written without spaces (Han, Kana, Hangul, Thai), the minimum substance of a
quote, and reasons that name the change; then the generated set of more than 1,000 Chinese quotes."""
from __future__ import annotations

from collections import Counter, defaultdict
from pathlib import Path

import pytest

from app.core.evidence import flag_reason, is_flagged
from app.core.quote_scripts import MINIMUM_CHARACTERS, MINIMUM_THAI, MINIMUM_WORDS
from app.core.quotes import CLOSE, EXACT, UNSUPPORTED, DocumentIndex
from tests.support.quote_text import ALTERED, GENUINE, PER_KIND, chinese_quote_set

pytestmark = pytest.mark.database_free

ISSUE_DOC = "王芳说他不喜欢上海的冬天。李娜在2001年搬到了北京。"
DOCS = Path(__file__).resolve().parents[2] / "docs" / "judge.md"


def test_the_issues_quotes_are_exact_with_their_offsets():
    index = DocumentIndex(ISSUE_DOC)
    for quote in ("不喜欢上海的冬天", "在2001年搬到了北京", "说他不喜欢上海的冬天。李娜在2001年"):
        check = index.verify(quote)
        assert check.status == EXACT and ISSUE_DOC[check.start:check.end] == quote, check


def test_a_paragraph_break_and_spacing_only_changes():
    text = "王芳说他不喜欢上海的冬天。\n\n李娜在2001年搬到了北京。"
    index = DocumentIndex(text)
    across = index.verify("上海的冬天。\n李娜在2001年")  # the break's whitespace folds to one space, as in English
    assert across.status == EXACT and text[across.start:across.end] == "上海的冬天。\n\n李娜在2001年"
    joined = index.verify("上海的冬天。李娜在2001年")  # the break left out
    assert joined.status == CLOSE and joined.reason.endswith("apart from spacing")
    spaced = index.verify("王芳 说他 不喜欢 上海的冬天")
    assert spaced.status == CLOSE and text[spaced.start:spaced.end] == "王芳说他不喜欢上海的冬天"
    assert index.verify("李娜在 2001 年搬到了北京").status == CLOSE
    punctuated = index.verify("冬天，李娜在2001年搬到")
    assert punctuated.status == CLOSE and "punctuation" in punctuated.reason


@pytest.mark.parametrize("quote, named", [
    ("李娜在2002年搬到了北京", "a number: 2002 vs 2001"),
    ("李娜在201年搬到了北京", "a number: 201 vs 2001"),
    ("王芳说他喜欢上海的冬天", "a negation: (nothing) vs 不"),
    ("李娜没在2001年搬到了北京", "a negation: 没 vs (nothing)"),
    ("李娜并非在2001年搬到北京", "a negation: 并非 vs (nothing)"),
    ("王芳说他不喜欢南京的冬天", "a word: 南京 vs 上海"),
    ("张伟在2001年搬到了北京", "a word: 张伟 vs 李娜"),
])
def test_digits_negations_and_names_stay_strict_and_the_reason_names_them(quote, named):
    check = DocumentIndex(ISSUE_DOC + "他们后来都很少回去。" * 3).verify(quote)
    assert (check.status, check.start) == (UNSUPPORTED, None) and named in check.reason, check


def test_a_number_and_a_latin_word_keep_their_boundaries_inside_chinese():
    index = DocumentIndex("Orrin Vale在2001年访问了雁回山，写下了一首诗。")
    assert index.verify("001年访问了雁回山").status == UNSUPPORTED  # never part of a number
    assert index.verify("rin Vale在2001年访问").status == UNSUPPORTED  # nor of a word
    assert index.verify("Vale在2001年访问了").status == EXACT
    assert index.verify("vale在2001年访问了").status == CLOSE


def test_kana_hangul_and_thai_are_read_character_by_character():
    japanese = DocumentIndex("私は昨日東京の古い本屋で辞書を買いました。")
    assert japanese.verify("東京の古い本屋で辞書").status == EXACT
    assert japanese.verify("東京の 古い本屋で 辞書").status == CLOSE
    korean = DocumentIndex("우리는 어제 서울에서 오래된 책을 샀습니다.")
    assert korean.verify("서울에서 오래된 책").status == EXACT
    assert korean.verify("울에서 오래된 책을").status == EXACT  # a quote may start inside a phrase
    assert korean.verify("서울에서오래된책을").status == CLOSE
    thai = "เขาไม่ได้ไปตลาดเมื่อวานนี้เพราะฝนตกหนักมาก"
    index = DocumentIndex(thai)
    assert index.verify("ไม่ได้ไปตลาดเมื่อวาน").status == EXACT
    assert index.verify("ไม่ได้ไป ตลาดเมื่อวาน").status == CLOSE
    # A tone mark belongs to its consonant: a quote never ends between them, and a dropped mark is a change.
    assert index.verify("เขาไม่ได้ไปตลาดเมื่อวานนี้เพราะฝนตกหนักม").status == EXACT
    assert index.verify("เขาไม").status == UNSUPPORTED
    changed = index.verify("เขาไมได้ไปตลาดเมื่อวาน")
    assert changed.status == UNSUPPORTED


@pytest.mark.parametrize("quote", [".", "a", "the", "of the", "It did not", "不喜欢", "上海的冬天", "Orrin在2001年",
                                   "ไม่ได้ไป"])
def test_a_quote_under_the_minimum_is_too_short_and_unsupported(quote):
    text = ("It did not meet again, and the board of the town resigned. " + ISSUE_DOC +
            " Orrin在2001年到了。 เขาไม่ได้ไปตลาดเมื่อวานนี้")
    check = DocumentIndex(text).verify(quote)
    assert (check.status, check.start, check.too_short) == (UNSUPPORTED, None, True), check
    assert check.reason.startswith("too short: ") and f"at least {MINIMUM_WORDS} words" in check.reason
    assert "in the document" in check.reason  # it still says whether the text holds it


def test_the_minimum_per_script_and_mixed():
    text = "In 1998 the board resigned. 王芳说他不喜欢上海的冬天。Orrin Vale在2001年到了北京。เขาไม่ได้ไปตลาดเมื่อวานนี้"
    index = DocumentIndex(text)
    assert not index.verify("In 1998 the board").too_short  # 4 words
    assert not index.verify("他不喜欢上海的").too_short  # 6 characters
    assert index.verify("不喜欢上海").too_short  # 5
    assert not index.verify("Orrin Vale在2001年到").too_short  # 3 words (3/4) and 2 characters (2/6)
    assert not index.verify("Vale在2001年到").too_short  # 2/4 + 3/6
    assert index.verify("Vale在2001年").too_short  # 2/4 + 2/6
    assert not index.verify("ไม่ได้ไปตลาด").too_short  # 10 Thai characters (marks are part of theirs)
    assert index.verify("ไม่ได้ไปตลา").too_short  # 9
    assert "a word: มื vs มื่" in index.verify("ไม่ได้ไปตลาดเมื").reason  # a dropped tone mark is a change
    assert (MINIMUM_WORDS, MINIMUM_CHARACTERS, MINIMUM_THAI) == (4, 6, 10)


def test_a_too_short_quote_flags_its_decision():
    index = DocumentIndex(ISSUE_DOC + " It did not meet again.")
    checked = [{"status": c.status, "too_short": c.too_short} for c in
               (index.verify("不喜欢上海的冬天"), index.verify("the"))]
    assert is_flagged(checked) and flag_reason(checked) == "a quote under the minimum"
    assert not is_flagged(checked[:1]) and flag_reason(checked[:1]) is None
    invented = [{"status": UNSUPPORTED, "too_short": False}] * 2
    assert flag_reason(invented) == "every quote unsupported"
    assert not is_flagged([{"status": EXACT}])  # stored before the minimum: no too_short key


def test_the_docs_state_the_rules_per_script():
    text = DOCS.read_text(encoding="utf-8")
    for rule in ("Han, Kana, Hangul and Thai", f"{MINIMUM_WORDS} words", f"{MINIMUM_CHARACTERS} Han, Kana or Hangul",
                 f"{MINIMUM_THAI} Thai", "too short", "不", "没", "非", "无"):
        assert rule in text, rule


def test_over_1000_generated_chinese_quotes_copies_exact_spacing_close_alterations_never(capsys):
    documents, planted = chinese_quote_set()
    assert len(planted) == sum(PER_KIND.values()) >= 1000
    indexes = [DocumentIndex(text) for text in documents]
    counts: dict[str, Counter] = defaultdict(Counter)
    wrong = []
    for item in planted:
        check = indexes[item.document].verify(item.quote)
        counts[item.kind][check.status] += 1
        want = EXACT if item.kind.startswith("copy") else CLOSE if item.kind.startswith("spacing") else UNSUPPORTED
        assert item.expected == want, item  # the independent oracle agrees with the kind
        if check.status != want:
            wrong.append((item, check))
    with capsys.disabled():
        print(f"\n{len(planted)} generated Chinese quotes:")
        for kind in GENUINE + ALTERED:
            print(f"  {kind:<36} {dict(counts[kind])}")
        print(f"  misjudged: {len(wrong)}")
    assert not wrong, wrong[:5]
