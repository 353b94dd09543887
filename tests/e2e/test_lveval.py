"""LV-Eval in a browser, on the shipped demo: the level curves, the table under them, the needle heatmaps,
the leaderboard tab, and editing a system's context window (which moves its ceiling)."""
from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import screenshot, sign_in

pytestmark = pytest.mark.e2e

DEMO_MODELS = ("heron-13b-128k", "heron-13b-128k-no-cfi", "orca-7b-32k", "wren-3b-8k")


def test_curves_table_and_heatmaps_on_the_demo(live_server, page):
    sign_in(page, live_server.url, live_server.admin_user, live_server.admin_password)
    page.goto(live_server.url + "/lveval")
    chart = page.locator("#lveval-curves")
    chart.wait_for(state="visible")
    box = chart.bounding_box()
    assert box["width"] >= 500 and box["height"] >= 300
    # One line and five points per system, with their names in the legend and the tooltips.
    assert page.locator("#lveval-curves .chart-line").count() == 4
    assert page.locator("#lveval-curves circle.chart-point").count() == 4 * 5
    legend = page.locator("#lveval-curves .chart-legend-label").all_text_contents()
    assert sorted(legend) == sorted(DEMO_MODELS)
    tooltip = page.locator("#lveval-curves circle.chart-point title").first.text_content()
    assert re.match(r".+ at 16k: \d+\.\d\d \(95% interval \d+\.\d\d–\d+\.\d\d\)", tooltip), tooltip
    # Dashed ceilings for the systems whose window is shorter than a level; wren is flagged at long levels.
    assert page.locator("#lveval-curves .chart-ceiling").count() >= 2
    assert page.locator("#lveval-curves .chart-flagged").count() >= 3
    # The table sits under the chart, one row per system, LV-Eval's numbers in it.
    table = page.locator("table.lveval-table")
    assert table.bounding_box()["y"] >= box["y"] + box["height"] - 1
    assert table.locator("tbody tr").count() == 4
    wren = table.locator('tr[data-system="wren-3b-8k"]')
    assert wren.locator('td[data-flag="leakage"]').count() >= 3
    assert wren.get_by_text("leakage?").first.is_visible()
    screenshot(page, "lveval-overall")

    # Needle heatmaps: one per system and factrecall dataset, 10 depth bins x 5 levels each.
    heatmap = page.locator('figure.needle-heatmap[data-system="orca-7b-32k"][data-dataset="factrecall_en"]')
    heatmap.scroll_into_view_if_needed()
    assert heatmap.is_visible()
    cells = heatmap.locator("rect.chart-cell")
    assert cells.count() == 50
    colours = {cells.nth(i).get_attribute("fill") for i in range(50)}
    assert len(colours) >= 3  # scores differ by depth and level
    hbox = heatmap.locator("svg").bounding_box()
    assert hbox["width"] >= 300 and hbox["height"] >= 250
    assert page.locator("figure.needle-heatmap svg").count() == 8
    assert heatmap.locator("svg title").first.text_content().startswith("orca-7b-32k: factrecall_en")
    screenshot(page, "lveval-heatmap")

    # A dataset tab: the chart and the table switch to that dataset, and the tab says so.
    page.get_by_role("link", name="factrecall_zh", exact=True).click()
    expect(page).to_have_url(re.compile(r"dataset=factrecall_zh"))
    expect(page.locator('.dataset-tabs a[aria-current="page"]')).to_have_text("factrecall_zh")
    expect(page.locator("#lveval-curves title").first).to_contain_text("factrecall_zh: score by length level")
    expect(page.locator("#curves-heading")).to_have_text(re.compile(r"^\s*factrecall_zh"))


def test_leaderboard_tab_and_editing_the_context_window(live_server, page):
    sign_in(page, live_server.url, live_server.admin_user, live_server.admin_password)
    page.goto(live_server.url + "/leaderboard")
    page.get_by_role("link", name="LV-Eval", exact=True).last.click()
    expect(page).to_have_url(re.compile(r"view=lveval"))
    expect(page.locator("#leaderboard-lveval-curves")).to_be_visible()
    expect(page.locator("table.lveval-table tbody tr")).to_have_count(4)

    # orca's window is 32k: the ceiling starts at 64k. Make it 128k and the ceiling moves past 128k.
    page.goto(live_server.url + "/lveval")
    before = page.locator('section[aria-labelledby="ceiling-heading"] tr[data-system="orca-7b-32k"]').text_content()
    assert "32k" in before
    page.locator('table.lveval-table tr[data-system="orca-7b-32k"] a').click()
    page.get_by_text("Edit", exact=True).click()
    field = page.get_by_label("Max-Ctx")
    field.fill("128k")
    page.get_by_role("button", name="Save keys").click()
    expect(page.locator('dd[data-key="context_window"]')).to_have_text("131,072 tokens")
    page.goto(live_server.url + "/lveval")
    after = page.locator('section[aria-labelledby="ceiling-heading"] tr[data-system="orca-7b-32k"]').text_content()
    assert "128k" in after and "reads all" in after
