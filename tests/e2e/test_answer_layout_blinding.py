"""Blinding in a browser: an annotator comparing how answers are laid out, question after question,
cannot pick out a system by its whitespace habits (a leading space or newline, CRLF line ends,
trailing spaces, a byte-order mark, zero-width characters, tabs, runs of blank lines)."""
from __future__ import annotations

import hashlib

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import sign_in
from tests.e2e.test_scoring import database, make_annotator

pytestmark = pytest.mark.e2e

# Where each answer's first glyph sits inside its box, and how its text starts and ends, as rendered.
MEASURE = """() => Array.from(document.querySelectorAll('.answer')).map((answer) => {
  const box = answer.querySelector('.answer-text');
  const outer = box.getBoundingClientRect();
  const walker = document.createTreeWalker(box, NodeFilter.SHOW_TEXT);
  let node, offset = -1;
  while ((node = walker.nextNode())) { offset = node.data.search(/\\S/); if (offset >= 0) break; }
  const range = document.createRange();
  range.setStart(node, offset);
  range.setEnd(node, offset + 1);
  const glyph = range.getClientRects()[0];
  const text = box.textContent;
  return {label: answer.dataset.label, left: glyph.left - outer.left, top: glyph.top - outer.top,
          first: text.charAt(0), last: text.charAt(text.length - 1), text: text};
})"""


def mangle(text: str) -> str:
    """One system's habits, all at once, around the same words."""
    lines = [line + "  " for line in text.strip().split("\n")]
    body = "\r\n".join(lines).replace(" ", "\u00a0", 1)
    return "\ufeff \r\n\t  " + body.replace(". ", ".\u200b ", 1) + "\r\n\r\n\r\n\r\n  \r\n"


def test_one_systems_whitespace_habits_do_not_show_on_any_question(live_server, page):
    password = make_annotator(live_server, "quinn")
    with database(live_server) as db:
        study_id = db.execute("SELECT id FROM studies ORDER BY id LIMIT 1").scalar()
        system_id = db.execute("SELECT system_id FROM study_answers WHERE study_id = ? ORDER BY id LIMIT 1",
                               (study_id,)).scalar()
        rows = db.execute(
            "SELECT a.id, a.text FROM answers a JOIN study_answers s ON s.answer_id = a.id "
            "WHERE s.study_id = ? AND s.system_id = ?", (study_id, system_id)).fetchall()
        assert len(rows) == 10
        for answer_id, text in rows:
            changed = mangle(text)
            db.execute("UPDATE answers SET text = ?, sha256 = ? WHERE id = ?",
                       (changed, hashlib.sha256(changed.encode()).hexdigest(), answer_id))
    sign_in(page, live_server.url, "quinn", password)
    links = page.locator("#qlist-menu .qlist-item").evaluate_all("items => items.map((a) => a.href)")
    assert len(links) == 10
    for link in links:
        page.goto(link)
        expect(page.locator(".answer")).to_have_count(4)
        answers = page.evaluate(MEASURE)
        where = f"{link}: {[(a['label'], round(a['left'], 1), round(a['top'], 1)) for a in answers]}"
        # No answer is indented or pushed down relative to the others.
        assert len({round(a["left"], 1) for a in answers}) == 1, where
        assert len({round(a["top"], 1) for a in answers}) == 1, where
        for answer in answers:
            assert not answer["first"].isspace() and answer["first"] != "\ufeff", where
            assert not answer["last"].isspace(), where
            text = answer["text"]
            for habit in ("\r", "\ufeff", "\u200b", "\u00a0", "\t", " \n", "\n\n\n"):
                assert habit not in text, (where, answer["label"], repr(habit))
