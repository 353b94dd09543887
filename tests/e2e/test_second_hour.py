"""Issue 40, "the second hour": what a researcher and annotators meet after the README's first study is open,
in Chromium at 1400, 1024 and 390 px where layout is involved.

One server follows the README on a fresh instance (its first run loads the demo and prints the admin), imports
L-Eval's human-evaluation subset, scores it, creates alice and bob and opens the README's study with
`--annotators alice,bob --overlap 2 --open`.
"""
from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import screenshot, sign_in, start_server, stop_server
from tests.e2e.test_research_ux import run
from tests.support.shared import HUMAN_EVAL, require_shared

pytestmark = pytest.mark.e2e

STUDY = "L-Eval human evaluation"
PASSWORD = "annotate-pass-1"
WIDTHS = (1400, 1024, 390)
HEIGHT = {1400: 900, 1024: 768, 390: 844}


@pytest.fixture(scope="module")
def walkthrough(tmp_path_factory):
    require_shared()
    instance = tmp_path_factory.mktemp("walkthrough") / "instance"
    server = start_server(instance)  # a real first run: migrations, the demo, the admin's printed password
    try:
        run(server, "import-leval", str(HUMAN_EVAL))
        run(server, "score-metrics")
        for name in ("alice", "bob"):
            run(server, "create-user", name, "--role", "annotator", "--password-stdin", input=PASSWORD + "\n")
        run(server, "study", "create", STUDY, "--questions", "human_eval", "--annotators", "alice,bob",
            "--overlap", "2", "--open")
        yield server
    finally:
        stop_server(server)


def open_page(browser, server, width: int, user: str | None = None):
    context = browser.new_context(viewport={"width": width, "height": HEIGHT.get(width, 900)})
    page = context.new_page()
    page.set_default_timeout(15_000)
    if user is None:
        sign_in(page, server.url, server.admin_user, server.admin_password)
    else:
        sign_in(page, server.url, user, PASSWORD)
    return context, page


def no_sideways_scroll(page) -> None:
    width = page.evaluate("[document.documentElement.scrollWidth, document.documentElement.clientWidth]")
    assert width[0] <= width[1], f"the page scrolls sideways: {width[0]} px wide in a {width[1]} px window"


@pytest.mark.parametrize("width", WIDTHS)
def test_the_reply_format_tile_reads_as_a_sentence(browser, walkthrough, width):
    """Item 3: the "Reply format" tile of the rater's and the judge's evidence profile printed a sentence in the
    big-number font of the tiles beside it."""
    context, page = open_page(browser, walkthrough, width)
    for path in ("/judge/rater", "/judge/"):
        page.goto(walkthrough.url + path)
        tiles = page.locator("#evidence-defaults .stat")
        number = tiles.filter(has_text="Quotes per answer").locator("dd")
        sentence = tiles.filter(has_text="Reply format").locator("dd")
        expect(sentence).to_be_visible()
        size = lambda locator: float(locator.evaluate("e => parseFloat(getComputedStyle(e).fontSize)"))  # noqa: E731
        body = float(page.evaluate("parseFloat(getComputedStyle(document.body).fontSize)"))
        assert size(sentence) <= body < size(number), (path, size(sentence), body, size(number))
        tile = tiles.filter(has_text="Reply format").bounding_box()
        text = sentence.bounding_box()
        assert text["x"] + text["width"] <= tile["x"] + tile["width"] + 1, (path, text, tile)
    screenshot(page, f"second-hour-reply-tile-{width}")
    context.close()
