"""The judge in a browser: estimate, launch, watch the run finish, read both aggregations."""
from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from app.services.demo import DEMO_PATH
from tests.e2e.conftest import JOB_PATIENCE_MS, screenshot, sign_in, start_server, stop_server
from tests.support.judge_data import biased_shorter_judge, biased_shorter_verdict, read_pred_file
from tests.support.openai_stub import StubOpenAIServer

pytestmark = pytest.mark.e2e

KEY = "sk-e2e-judge-SECRET-0123456789"
SYSTEM, BASELINE = "balanced-34b", "shaky-3b"


@pytest.fixture
def judged_server(tmp_path):
    with StubOpenAIServer(policy=biased_shorter_judge, latency_s=0.05) as stub:
        server = start_server(tmp_path / "instance", {"OPENAI_BASE_URL": stub.base_url, "OPENAI_API_KEY": KEY})
        try:
            yield server, stub
        finally:
            stop_server(server)


def expected_rates() -> tuple[float, float, int]:
    """Return the L-Eval and FastChat win % and the inconsistent pairs the stand-in judge will give."""
    folder = DEMO_PATH / "human_eval"
    system = read_pred_file(folder / f"{SYSTEM}.pred.jsonl")
    baseline = read_pred_file(folder / f"{BASELINE}.pred.jsonl")
    points = {"A": 1.0, "C": 0.5, "B": 0.0}
    verdict_points, pair_points, inconsistent = [], [], 0
    for key, answer in system.items():
        first = points[biased_shorter_verdict(answer, baseline[key])]  # the system is A
        second = 1.0 - points[biased_shorter_verdict(baseline[key], answer)]  # the system is B
        verdict_points += [first, second]
        inconsistent += first != second
        pair_points.append(first if first == second else 0.5)
    return 100 * sum(verdict_points) / len(verdict_points), 100 * sum(pair_points) / len(pair_points), inconsistent


def test_estimate_launch_and_read_a_run(judged_server, page):
    server, stub = judged_server
    problems: list[str] = []
    page.on("console", lambda message: problems.append(message.text) if message.type == "error" else None)
    failed: list[str] = []
    # Browsers ask for /favicon.ico on their own; the app has none.
    page.on("response", lambda r: failed.append(f"{r.status} {r.url}")
            if r.status >= 400 and not r.url.endswith("/favicon.ico") else None)
    sign_in(page, server.url, server.admin_user, server.admin_password)

    page.get_by_role("navigation", name="Main").get_by_role("link", name="Judge").click()
    expect(page.get_by_role("heading", name="Pairwise LLM judge")).to_be_visible()
    page.get_by_label("System under test").select_option(SYSTEM)
    page.get_by_label("Baseline").select_option(BASELINE)
    page.get_by_role("button", name="Estimate (dry run)").click()
    estimate = page.get_by_role("status").filter(has_text="Dry run")
    expect(estimate).to_contain_text("10 pairs, 20 judgments")
    expect(page.locator('[data-estimate="calls"]')).to_have_text("20")
    assert stub.calls == 0
    screenshot(page, "judging-estimate")

    page.get_by_role("button", name="Launch").click()
    expect(page).to_have_url(re.compile(r"/judge/runs/\d+$"))
    # jobs.js polls the job; judging.js reloads the page once it is done.
    expect(page.locator(".job-status")).to_have_text("done", timeout=JOB_PATIENCE_MS)
    leval, fastchat, inconsistent = expected_rates()
    assert inconsistent > 0  # position bias shows up in the FastChat card
    expect(page.locator('[data-metric="win_rate"]')).to_have_text(f"{leval:.1f}%")
    expect(page.locator('[data-metric="win_rate_fastchat"]')).to_have_text(f"{fastchat:.1f}%")
    expect(page.locator('[data-metric="inconsistent"]')).to_have_text(str(inconsistent))
    expect(page.get_by_role("heading", name="L-Eval aggregation")).to_be_visible()
    expect(page.get_by_role("heading", name="FastChat aggregation")).to_be_visible()
    expect(page.locator('[data-metric="api_calls"]')).to_have_text("20")
    assert stub.calls == 20 and all(r.authorization == f"Bearer {KEY}" for r in stub.requests)

    screenshot(page, "judging-run")
    page.locator("table.pairs summary").first.click()
    expect(page.locator("table.pairs pre.reply").first).to_contain_text("Final</b> verdict")
    screenshot(page, "judging-run-pair")

    page.get_by_role("navigation", name="Judge").get_by_role("link", name="Settings").click()
    expect(page.locator("[data-masked-key]")).to_have_text("sk-…6789")
    assert KEY not in page.content()
    screenshot(page, "judging-settings")
    assert not failed, failed
    assert not [p for p in problems if "Failed to load resource" not in p], problems  # CSP or script errors
