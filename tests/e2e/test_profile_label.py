"""A profile's name looks the same on every page that names it (one macro, templates/_profile.html, and one CSS rule).

It was a plain bold word on the Leaderboard, a yellow pill on Metrics vs humans, and the word "Profile:"
before the switch turned into a pill on LV-Eval, whose page loads the results' style sheet.
"""
from __future__ import annotations

import pytest

from tests.e2e.conftest import sign_in

pytestmark = pytest.mark.e2e

PAGES = ("/leaderboard", "/lveval", "/results/correlation", "/results/disagreements", "/results/table2")
STYLE = ("backgroundColor", "color", "borderTopColor", "borderTopLeftRadius", "fontWeight", "fontSize",
         "paddingLeft")
READ_STYLE = "(element, names) => { const style = getComputedStyle(element); return names.map(n => style[n]); }"


def test_the_profile_label_has_one_look_on_every_page(live_server, page):
    sign_in(page, live_server.url, live_server.admin_user, live_server.admin_password)
    looks, titles = {}, {}
    for path in PAGES:
        page.goto(live_server.url + path)
        label = page.locator("strong.profile-label").first
        assert label.count() == 1, f"{path} names its profile without the shared label"
        assert label.inner_text().startswith("official"), path
        looks[path] = label.evaluate(READ_STYLE, list(STYLE))
        title = page.locator(".profile-switch-title")
        if title.count():
            titles[path] = title.evaluate(READ_STYLE, list(STYLE))
    assert len({tuple(look) for look in looks.values()}) == 1, looks
    background = looks[PAGES[0]][0]
    assert background not in ("rgba(0, 0, 0, 0)", "transparent"), "the label stands out from the sentence"
    # The switch's "Profile:" is a heading word, alike on the Leaderboard and on LV-Eval, never a pill.
    assert set(titles) == {"/leaderboard", "/lveval"}, titles
    assert titles["/leaderboard"] == titles["/lveval"] and titles["/lveval"][0] == "rgba(0, 0, 0, 0)"
