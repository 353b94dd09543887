"""The question page under the keyboard: the first answer takes the first key on arrival, nothing shifts
the workspace, next/previous question keys, and find-in-document's Enter and `/`."""
from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import count_navigations, navigations, painted, screenshot, sign_in, wait_until_true
from tests.e2e.test_scoring import QUESTION_URL, database, make_annotator, score_with_mouse, wait_saved

pytestmark = pytest.mark.e2e

SIZES = ({"width": 1400, "height": 900}, {"width": 1024, "height": 768})


def bar_box(page) -> dict:
    return page.locator("#workbar").bounding_box()


def viewport_scroll(page) -> tuple[float, float]:
    """How far the window itself has scrolled; the workspace's panels scroll, the window never should."""
    return tuple(page.evaluate("[document.scrollingElement.scrollTop, document.body.scrollTop]"))


def saved_scores(server, username: str, question_id: int) -> dict[str, int]:
    """What the database holds for one annotator on one question, by the label the annotator saw."""
    with database(server) as db:
        rows = db.execute(
            "SELECT s.answer_label, s.value FROM scores s JOIN users u ON u.id = s.annotator_id "
            "JOIN answers a ON a.id = s.answer_id WHERE u.username = ? AND a.question_id = ? AND s.value IS NOT NULL",
            (username, question_id)).fetchall()
    return dict(rows)


def question_id(page) -> int:
    return int(QUESTION_URL.search(page.url).group(1))


def expect_shown(page, values: dict[str, int | None]) -> None:
    for label, value in values.items():
        expect(page.locator(f"#answer-{label} [data-state]")).to_have_text(
            f"Scored {value}" if value else "Not scored")


def expect_keyboard_target(page, label: str) -> None:
    """What a person sees on arriving: Answer <label> has the focus and the current answer's mark, and the
    answers' index at the top of the pane, on screen, marks it apart from the others."""
    answer = page.locator(f"#answer-{label}")
    expect(answer).to_be_focused()
    expect(page.locator(".answer.is-current")).to_have_count(1)
    expect(answer).to_have_class(re.compile(r"\bis-current\b"))
    jump = page.locator(f'.jump[data-jump="{label}"]')
    expect(jump).to_have_attribute("aria-current", "true")
    expect(page.locator('.jump[aria-current="true"]')).to_have_count(1)
    expect(jump).to_be_in_viewport()
    looks = page.evaluate("""() => Array.from(document.querySelectorAll('.jump')).map((jump) => {
        const style = getComputedStyle(jump);
        return [jump.dataset.jump, style.outlineStyle + ' ' + style.outlineColor + ' ' + style.boxShadow]; })""")
    marked = dict(looks)[label]
    assert all(look != marked for other, look in looks if other != label), looks
    assert page.evaluate("(el) => getComputedStyle(el).boxShadow", answer.element_handle()) != "none"


def test_the_first_answer_takes_the_first_key_on_arriving_at_each_question(live_server, browser):
    """Typing a score straight away scores Answer A, then j moves on: on the first load, after n and p, after
    a reload, at both widths the issue was seen at (one annotator each)."""
    for size, name in zip(SIZES, ("uma", "vik")):
        context = browser.new_context(viewport=size)
        page = context.new_page()
        where = f"at {size['width']}×{size['height']}"
        sign_in(page, live_server.url, name, make_annotator(live_server, name))  # lands on question 1
        first = question_id(page)
        for key in ("4", "j", "2", "j", "5"):
            page.keyboard.press(key)
        wait_saved(page)
        expect_shown(page, {"A": 4, "B": 2, "C": 5, "D": None})
        assert saved_scores(live_server, name, first) == {"A": 4, "B": 2, "C": 5}, where
        expect(page.locator("#answer-C")).to_be_focused()

        page.keyboard.press("n")
        expect(page.get_by_text("Question 2 of 10")).to_be_visible()
        expect_keyboard_target(page, "A")
        screenshot(page, f"annotator-arrival-{size['width']}")
        second = question_id(page)
        assert second != first
        for key in ("3", "j", "1", "j", "2", "j", "5"):
            page.keyboard.press(key)
        wait_saved(page)
        expect_shown(page, {"A": 3, "B": 1, "C": 2, "D": 5})
        assert saved_scores(live_server, name, second) == {"A": 3, "B": 1, "C": 2, "D": 5}, where

        page.keyboard.press("p")
        expect(page.get_by_text("Question 1 of 10")).to_be_visible()
        expect_keyboard_target(page, "A")
        for key in ("1", "j", "3"):
            page.keyboard.press(key)
        wait_saved(page)
        expect_shown(page, {"A": 1, "B": 3, "C": 5, "D": None})
        assert saved_scores(live_server, name, first) == {"A": 1, "B": 3, "C": 5}, where

        page.reload()
        expect_keyboard_target(page, "A")
        for key in ("2", "k", "j", "j", "j", "4"):  # k on the first answer stays there
            page.keyboard.press(key)
        wait_saved(page)
        expect_shown(page, {"A": 2, "B": 3, "C": 5, "D": 4})
        assert saved_scores(live_server, name, first) == {"A": 2, "B": 3, "C": 5, "D": 4}, where
        screenshot(page, f"annotator-first-key-{size['width']}")
        context.close()


def test_a_text_box_reached_while_the_page_loads_keeps_the_focus(live_server, page):
    """The arrival focus never takes a text box from an annotator who got there first; a click on plain text
    leaves the marked answer as the keys' target."""
    name = "wren"
    sign_in(page, live_server.url, name, make_annotator(live_server, name))
    held = []  # the page's script, held back until the annotator has typed into the find box
    page.route("**/static/js/annotate.js*", lambda route: held.append(route))
    page.reload(wait_until="commit")
    box = page.get_by_role("searchbox", name="Find in document")
    box.click()
    page.keyboard.type("board 1")
    assert len(held) == 1
    held[0].continue_()
    page.wait_for_load_state("load")  # deferred scripts have run before the load event
    page.unroute("**/static/js/annotate.js*")
    expect(box).to_be_focused()
    expect(box).to_have_value("board 1")
    expect(page.locator(".answer.is-current")).to_have_count(0)
    expect(page.locator('.jump[aria-current="true"]')).to_have_count(0)
    page.keyboard.press("Escape")  # clears the search
    page.keyboard.press("Escape")  # leaves the box
    expect(box).not_to_be_focused()
    page.keyboard.press("j")  # from nowhere, j starts at the first answer
    expect(page.locator("#answer-A")).to_be_focused()
    page.locator("h1.question-text").click()  # plain text: the focus drops to the page, the mark stays
    expect(page.locator("#answer-A")).not_to_be_focused()
    expect(page.locator("#answer-A")).to_have_class(re.compile(r"\bis-current\b"))
    for key in ("3", "j", "4"):
        page.keyboard.press(key)
    wait_saved(page)
    expect_shown(page, {"A": 3, "B": 4, "C": None, "D": None})
    assert saved_scores(live_server, name, question_id(page)) == {"A": 3, "B": 4}


def test_keys_on_a_scored_question_never_move_the_work_bar(live_server, browser):
    password = make_annotator(live_server, "kim")
    scored_url = None
    for size in SIZES:
        context = browser.new_context(viewport=size)
        page = context.new_page()
        sign_in(page, live_server.url, "kim", password)
        if scored_url is None:
            score_with_mouse(page, {"A": 3, "B": 4, "C": 2, "D": 5})
            scored_url = page.url
        page.goto(scored_url)  # a fully scored question: the checked radios come from the server
        expect(page.locator(".score-radio:checked")).to_have_count(4)
        expect(page.locator(".doc-seg").first).to_be_visible()
        before = bar_box(page)
        assert before["y"] >= 0
        keys = ["j", "1", "2", "3", "4", "5", "c", "Escape", "j", "5", "c", "Escape", "j", "c", "Escape",
                "j", "4", "c", "Escape", "j", "j", "c", "k", "Escape", "k", "3", "k", "k", "k", "c", "Escape"]
        for index, key in enumerate(keys):
            page.keyboard.press(key)
            painted(page)  # whatever the key moved is on screen
            box = bar_box(page)
            where = f"after key {index} ({key!r}) at {size['width']}×{size['height']}"
            assert box == before, where
            assert viewport_scroll(page) == (0, 0), where
            # The bar is on screen: the element at its middle is the bar (or something inside it).
            inside = page.evaluate(
                "([x, y]) => document.getElementById('workbar').contains(document.elementFromPoint(x, y))",
                [before["x"] + 10, before["y"] + before["height"] / 2])
            assert inside, where
        # The keys did their work: the last answer was reached and the focused one is in view in its pane.
        current = page.locator(".answer.is-current")
        expect(current).to_have_count(1)
        expect(current).to_be_in_viewport()
        # The wheel over the answers scrolls the pane, not the page.
        top = page.evaluate("document.getElementById('score-panel').scrollTop")
        assert top > 0
        page.mouse.move(size["width"] * 0.75, size["height"] * 0.6)
        page.mouse.wheel(0, -5000)
        wait_until_true(page, f"document.getElementById('score-panel').scrollTop < {top}")
        painted(page)
        assert bar_box(page) == before and viewport_scroll(page) == (0, 0)
        screenshot(page, f"annotator-keys-{size['width']}")
        context.close()


def test_n_and_p_move_between_questions_but_not_from_text_boxes_or_with_modifiers(live_server, page):
    sign_in(page, live_server.url, "lena", make_annotator(live_server, "lena"))
    first = page.url
    expect(page.get_by_text("Question 1 of 10")).to_be_visible()
    count_navigations(page)
    page.keyboard.press("p")  # nothing before the first question
    assert navigations(page) == 0 and page.url == first
    page.keyboard.press("n")
    expect(page.get_by_text("Question 2 of 10")).to_be_visible()
    page.wait_for_load_state()  # the text shows before the deferred scripts that take the keys have run
    second = page.url
    assert QUESTION_URL.search(second) and second != first
    # Typing an n in a comment or the find box is text, not navigation (Answer A has the keys on arrival).
    page.keyboard.press("c")
    page.keyboard.type("no thanks")
    expect(page.get_by_label("Comment on Answer A")).to_have_value("no thanks")
    page.get_by_label("Comment on Answer A").fill("")  # a comment without a score would hold the page
    page.get_by_role("searchbox", name="Find in document").fill("")
    count_navigations(page)
    page.get_by_role("searchbox", name="Find in document").type("plan n")
    assert navigations(page) == 0 and page.url == second
    page.keyboard.press("Escape")
    page.keyboard.press("Escape")
    page.locator("#doc-body").focus()
    # With a modifier the key belongs to the browser (or the screen reader).
    for chord in ("Control+n", "Alt+n", "Shift+N", "Alt+p", "Meta+p"):
        page.keyboard.press(chord)
    assert navigations(page) == 0 and page.url == second
    page.keyboard.press("p")
    expect(page.get_by_text("Question 1 of 10")).to_be_visible()
    page.wait_for_load_state()
    assert page.url == first
    # The ? panel lists the keys.
    page.keyboard.press("?")
    panel = page.get_by_role("dialog", name="Keyboard shortcuts")
    expect(panel).to_be_visible()
    expect(panel.get_by_role("definition").filter(has_text="Next question")).to_be_visible()
    expect(panel.get_by_role("definition").filter(has_text="Previous question")).to_be_visible()
    for key in ("n", "p"):
        expect(panel.locator("kbd").filter(has_text=re.compile(f"^{key}$"))).to_have_count(1)
    screenshot(page, "annotator-shortcuts-panel")


def test_find_enter_moves_on_and_slash_selects_the_last_query(live_server, page):
    sign_in(page, live_server.url, "mo", make_annotator(live_server, "mo"))
    expect(page.locator(".doc-seg").first).to_be_visible()
    box = page.get_by_role("searchbox", name="Find in document")
    count = page.locator("#doc-find-count")
    box.click()
    page.keyboard.type("board")
    expect(count).to_have_text(re.compile(r"^1 of \d+$"))
    total = int(count.inner_text().split(" of ")[1])
    assert total > 2
    page.keyboard.press("Enter")  # the first Enter after typing moves on
    expect(count).to_have_text(f"2 of {total}")
    page.keyboard.press("Enter")
    expect(count).to_have_text(f"3 of {total}")
    page.keyboard.press("Shift+Enter")
    expect(count).to_have_text(f"2 of {total}")
    # Enter pressed before the search has run shows the first match, then moves on.
    box.fill("")
    page.keyboard.type("the")
    page.keyboard.press("Enter")
    expect(count).to_have_text(re.compile(r"^\d+ of \d+$"))
    shown = int(count.inner_text().split(" of ")[0])
    page.keyboard.press("Enter")
    expect(count).to_have_text(re.compile(rf"^{shown + 1} of \d+$"))
    # `/` from elsewhere focuses the box with the last query selected: typing replaces it.
    page.locator("#doc-body").focus()
    page.keyboard.press("/")
    expect(box).to_be_focused()
    assert page.evaluate("[document.activeElement.selectionStart, document.activeElement.selectionEnd]") == [0, 3]
    page.keyboard.type("board")
    expect(box).to_have_value("board")
    expect(count).to_have_text(re.compile(rf"^\d+ of {total}$"))
