"""Charts in Chromium: each fills its card's width (or its figure's), and its title (wrapped if long) stays
inside the card, on the results and LV-Eval pages at 1400 and 1024 px."""
from __future__ import annotations

import pytest

from tests.e2e.conftest import screenshot, sign_in
from tests.e2e.test_results import add_metric_values, score_file

pytestmark = pytest.mark.e2e

# For every chart in a card: the card's inner width, the chart's width, and the card's and the title's boxes.
MEASURE = """() => [...document.querySelectorAll('svg.chart')].map(svg => {
    const card = svg.closest('.chart-card') || svg.parentElement;
    const style = getComputedStyle(card);
    const inner = card.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
    const box = r => ({left: r.left, right: r.right, top: r.top, bottom: r.bottom});
    const title = svg.querySelector('.chart-title');
    return {id: svg.id, inner, width: svg.getBoundingClientRect().width,
            height: svg.getBoundingClientRect().height, card: box(card.getBoundingClientRect()),
            title: title ? box(title.getBoundingClientRect()) : null};
})"""
# Each page and the charts it shows at least (the demo's LV-Eval runs give the curves and 8 heatmaps).
PAGES = {"/results": 2, "/results/correlation": 4, "/results/agreement": 1, "/lveval": 9,
         "/leaderboard?view=lveval": 1}


def test_charts_fill_their_cards_and_titles_stay_inside(live_server, browser, tmp_path):
    for name in ("ann1", "ann2", "ann3"):
        created = live_server.cli("create-user", name, "--role", "annotator", "--password-stdin",
                                  input="annotate-pass-1\n")
        assert created.returncode == 0, created.stderr
    imported = live_server.cli("import-annotations", str(score_file(tmp_path / "scores.jsonl")))
    assert imported.returncode == 0, imported.stdout + imported.stderr
    add_metric_values(live_server.instance)
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    sign_in(page, live_server.url, live_server.admin_user, live_server.admin_password)
    try:
        for width in (1400, 1024):
            page.set_viewport_size({"width": width, "height": 900})
            for path, least in PAGES.items():
                page.goto(live_server.url + path)
                charts = page.evaluate(MEASURE)
                assert len(charts) >= least, (path, charts)
                for chart in charts:
                    where = (width, path, chart["id"])
                    assert chart["width"] >= chart["inner"] - 1, where  # fills the card, not half of it
                    assert chart["height"] > 60, where
                    title, card = chart["title"], chart["card"]
                    assert title is not None, where
                    assert card["left"] <= title["left"] and title["right"] <= card["right"], (where, title, card)
                    assert card["top"] <= title["top"] and title["bottom"] <= card["bottom"], (where, title, card)
                if width == 1400 and path.endswith("correlation"):
                    page.locator("#chart-ranks").scroll_into_view_if_needed()
                    screenshot(page, "chart-cards-correlation")
    finally:
        context.close()
