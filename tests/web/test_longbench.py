"""The leaderboard's LongBench tab: eval.py's and result.py's numbers per dataset, bucket and column, the app's
averages, the rows behind every number, and the same numbers in /leaderboard/json and /api/v1/leaderboard."""
from __future__ import annotations

import html
import math
import re

import pytest
from sqlalchemy import select

from app.core.metrics.longbench import BUCKETS, CATEGORIES
from app.extensions import db
from app.models import System
from app.services.metrics.compute import score_system
from tests.support import longbench_reference as ref
from tests.support.api import make_token
from tests.support.longbench_data import model_rows, write_data, write_model, write_v2

V1_DATASETS = ["multifieldqa_zh", "trec", "passage_retrieval_zh", "lcc", "qmsum"]
E_SET = ["passage_count", "trec"]


@pytest.fixture
def board(app, runner, tmp_path):
    for model, skill, seed in (("alpha", 0.8, 0), ("beta", 0.4, 1)):
        write_model(tmp_path, model, skill=skill, seed=seed, datasets=V1_DATASETS)
        write_model(tmp_path, model, e=True, skill=skill, seed=seed, datasets=E_SET)
        write_v2(tmp_path, model, skill=skill, seed=seed)
    write_data(tmp_path, datasets=["multifieldqa_zh"])
    result = runner.invoke(args=["import-longbench", str(tmp_path)])
    assert result.exit_code == 0, result.output
    with app.app_context():
        for (system_id,) in db.session.execute(select(System.id)):
            score_system(system_id)
    return tmp_path


@pytest.fixture
def researcher(client, auth):
    auth.login("researcher")
    return client


def _page(client, url: str) -> str:
    response = client.get(url)
    assert response.status_code == 200, url
    return response.get_data(as_text=True)


def _cells(page: str, variant: str, system: str, attribute: str) -> dict[str, str]:
    """A table's cells of one system, by the cell's data attribute (dataset, bucket, column…), as a person reads them."""
    tables = re.findall(rf'<table class="leaderboard longbench-datasets" data-variant="{variant}".*?</table>|'
                        rf'<table class="leaderboard longbench-table" data-variant="{variant}".*?</table>', page, re.S)
    found: dict[str, str] = {}
    for table in tables:
        row = re.search(rf'<tr data-system="{system}">(.*?)</tr>', table, re.S)
        for match in re.finditer(rf'<td class="num" ([^>]*)>(.*?)</td>', row.group(1), re.S):
            attrs = dict(re.findall(r'data-([a-z]+)="([^"]*)"', match.group(1)))
            if set(attrs) == set(attribute.split("@")):
                found["@".join(attrs[a] for a in attribute.split("@"))] = re.sub(r"<[^>]+>|\s+", "", match.group(2))
    return found


def _shown(value: float) -> str:
    return "—" if math.isnan(value) else f"{value:.2f}"


def test_the_tab_shows_result_json_result_txt_and_the_apps_averages(board, researcher):
    page = _page(researcher, "/leaderboard?view=longbench")
    assert 'aria-current="page">LongBench<' in page
    for model in ("alpha", "beta"):
        expected = ref.evaluate_model(board / "pred" / model)
        cells = _cells(page, "v1", model, "dataset")
        assert {d: cells[d] for d in V1_DATASETS} == {d: _shown(v) for d, v in expected.items()}
        assert all(cells[d] == "—" for d in cells if d not in V1_DATASETS)
        expected_e = ref.evaluate_model(board / "pred_e" / model, e=True)
        buckets = _cells(page, "e", model, "dataset@bucket")
        assert {k: v for k, v in buckets.items() if k.split("@")[0] in E_SET} == {
            f"{d}@{b}": _shown(value) for d, cell in expected_e.items() for b, value in cell.items()}
        # The app's own averages: a category's mean of its datasets' rounded scores, code counting in both languages.
        categories = _cells(page, "v1", model, "category")
        assert categories["Few-shot Learning"] == f"{expected['trec']:.2f}"
        languages = _cells(page, "v1", model, "language")
        zh = [expected[d] for d in ("multifieldqa_zh", "passage_retrieval_zh", "lcc")]
        assert languages["zh"] == f"{round(sum(zh) / 3, 2):.2f}"
        per_bucket = _cells(page, "e", model, "bucket")
        assert per_bucket["8k+"] == f"{expected_e['trec']['8k+']:.2f}"  # passage_count's 8k+ is empty (NaN)
        assert set(categories) == set(CATEGORIES) and set(per_bucket) >= set(BUCKETS)
    v2_line = next(line for line in ref.v2_result_txt(board / "results").split("\n") if line.startswith("beta\t"))
    columns = _cells(page, "v2", "beta", "column")
    assert list(columns.values()) == v2_line.split("\t")[1:]
    assert 'data-quirk="longbench_classification_skip"' in page


def test_every_number_links_to_the_rows_behind_it(board, app, researcher):
    page = _page(researcher, "/leaderboard?view=longbench")
    with app.app_context():
        alpha = db.session.scalar(select(System.id).where(System.name == "alpha"))
    link = re.search(rf'href="(/longbench/rows/{alpha}\?[^"]*dataset=multifieldqa_zh[^"]*)"', page).group(1)
    rows = _page(researcher, html.unescape(link))
    expected = ref.evaluate_model(board / "pred" / "alpha")["multifieldqa_zh"]
    assert f'data-field="aggregate">{expected:.2f}<' in rows
    predictions = [html.unescape(p) for p in re.findall(r'data-field="prediction">(.*?)</pre>', rows, re.S)]
    assert predictions == [row["pred"] for row in model_rows("multifieldqa_zh", skill=0.8, seed=0)]
    assert "Question:</strong> " in rows and "no text: LongBench's data file is not imported" not in rows
    # A dataset without the data file imported says its rows carry no question; a bucket shows its rows only.
    trec = _page(researcher, f"/longbench/rows/{alpha}?variant=v1&dataset=trec")
    assert "no text: LongBench's data file is not imported" in trec
    bucket = _page(researcher, f"/longbench/rows/{alpha}?variant=e&dataset=trec&part=8k%2B")
    lengths = [row["length"] for row in model_rows("trec", e=True)]
    assert f"{sum(1 for n in lengths if n >= 8000)} scored rows" in bucket
    fixed = _page(researcher, f"/longbench/rows/{alpha}?variant=v2&dataset=v2&part=Hard&profile=fixed")
    assert "hard, " in fixed and "easy, " not in fixed
    for url in (f"/longbench/rows/{alpha}?variant=v9", f"/longbench/rows/{alpha}?variant=e&dataset=narrativeqa",
                "/longbench/rows/999999"):
        assert researcher.get(url).status_code == 404, url


def test_json_and_api_carry_the_same_numbers_and_pick_one_benchmark(board, app, researcher, client):
    whole = researcher.get("/leaderboard/json").get_json()
    only = researcher.get("/leaderboard/json?benchmark=longbench").get_json()
    assert only["benchmark"] == "longbench" and only["systems"] == whole["longbench"]
    alpha = next(entry for entry in only["systems"] if entry["system"] == "alpha")
    assert alpha["result_json"] == ref.evaluate_model(board / "pred" / "alpha")
    expected_e = ref.evaluate_model(board / "pred_e" / "alpha", e=True)
    assert alpha["result_json_e"]["passage_count"] == {b: v for b, v in expected_e["passage_count"].items()
                                                       if not math.isnan(v)}
    assert researcher.get("/leaderboard/json?benchmark=nope").status_code == 404
    api = app.test_client()
    api.environ_base["HTTP_AUTHORIZATION"] = "Bearer " + make_token(app, "researcher", "read")
    for profile in ("official", "fixed"):
        answer = api.get(f"/api/v1/leaderboard?benchmark=longbench&profile={profile}")
        assert answer.status_code == 200, answer.get_json()
        assert answer.get_json() == researcher.get(f"/leaderboard/json?benchmark=longbench&profile={profile}").get_json()
    leval = api.get("/api/v1/leaderboard?benchmark=leval").get_json()
    assert leval["benchmark"] == "leval" and "longbench" not in leval and "lveval" not in leval
    assert api.get("/api/v1/leaderboard?benchmark=nope").status_code == 422


def test_a_systems_page_shows_its_longbench_numbers_beside_the_tab(board, app, researcher):
    """The per-system page has a section for every benchmark the system has numbers in (the plugins' sections)."""
    tab = _page(researcher, "/leaderboard?view=longbench")
    with app.app_context():
        alpha = db.session.scalar(select(System.id).where(System.name == "alpha"))
    page = _page(researcher, f"/leaderboard/systems/{alpha}")
    section = re.search(r'<section class="card" aria-labelledby="longbench-heading">(.*?)</section>', page, re.S)
    assert section, "no LongBench section on the system's page"
    overall = {variant: re.sub(r"<[^>]+>|\s+", "", cell) for variant, cell in re.findall(
        r'<tr data-variant="(\w+)">.*?<td class="num" data-field="overall">(.*?)</td>', section.group(1), re.S)}
    assert set(overall) == {"v1", "e", "v2"}
    # The same overall numbers as the tab's row of that system.
    assert overall["v1"] == re.sub(r"<[^>]+>|\s+", "", re.search(
        r'data-variant="v1".*?<tr data-system="alpha">.*?data-field="overall">(.*?)</td>', tab, re.S).group(1))
    assert 'href="/leaderboard?' in section.group(1) and "view=longbench" in section.group(1)
    assert "lveval-heading" not in page  # no LV-Eval numbers: no LV-Eval section
