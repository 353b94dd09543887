"""The LV-Eval page and leaderboard tab on the demo, the JSON export, and editing a system's leaderboard keys."""
from __future__ import annotations

import re

import pytest
from sqlalchemy import select

from app.extensions import db
from app.models import System
from app.services.demo import DEMO_PATH
from app.services.lveval import import_models
from app.services.metrics.job import score_unscored_systems
from tests.support import lveval_reference as ref
from tests.support.lveval_data import DEMO_KEYS, DEMO_MODELS, write_model

DEMO_LVEVAL = DEMO_PATH / "lveval"


@pytest.fixture
def scored(demo, client, auth):
    with demo.app_context():
        score_unscored_systems()
    auth.login("researcher")
    return client


def page_of(client, url: str) -> str:
    response = client.get(url)
    assert response.status_code == 200, url
    return response.get_data(as_text=True)


def table_cells(page: str, system: str) -> dict[str, str]:
    row = re.search(rf'<tr data-system="{re.escape(system)}">(.*?)</tr>', page, re.S).group(1)
    return {level: re.sub(r"<[^>]+>|\s+", " ", cell).split()[0]
            for level, cell in re.findall(r'data-level="([^"]+)"[^>]*>(.*?)</td>', row, re.S)}


def test_demo_table_per_dataset_equals_lvevals_result_json(scored):
    for model, *_ in DEMO_MODELS:
        expected = ref.evaluate_folder(DEMO_LVEVAL / model)
        for dataset in ("cmrc_mixup", "dureader_mixup", "factrecall_en", "loogle_SD_mixup"):
            cells = table_cells(page_of(scored, f"/lveval?dataset={dataset}"), model)
            for level in ("16k", "32k", "64k", "128k", "256k"):
                assert cells[level] == f"{expected['result_json'][f'{dataset}_{level}']:.2f}", (model, dataset, level)
            averages = ref.paper_averages(expected["table"])
            assert cells["avg"] == f"{averages['per_dataset'][dataset]:.2f}"


def test_overall_view_and_leaderboard_tab_give_the_papers_averages(scored):
    overall = page_of(scored, "/lveval")
    tab = page_of(scored, "/leaderboard?view=lveval")
    for model, *_ in DEMO_MODELS:
        averages = ref.paper_averages(ref.evaluate_folder(DEMO_LVEVAL / model)["table"])
        for page in (overall, tab):
            cells = table_cells(page, model)
            assert {level: cells[level] for level in averages["per_level"]} == {
                level: f"{value:.2f}" for level, value in averages["per_level"].items()}
            assert cells["avg"] == f"{averages['overall']:.2f}"
    assert overall.count("<svg") == 1 + 8  # the curves and eight needle heatmaps
    assert 'id="lveval-curves"' in overall and "Whiskers: 95% bootstrap intervals" in overall


def test_context_ceiling_and_the_leakage_flag(scored):
    page = page_of(scored, "/lveval")
    wren = re.search(r'<tr data-system="wren-3b-8k">(.*?)</tr>', page, re.S).group(1)
    assert wren.count('data-flag="leakage"') >= 3  # its card says 8k, yet it scores at 256k
    heron = re.search(r'<tr data-system="heron-13b-128k">(.*?)</tr>', page, re.S).group(1)
    assert 'data-flag="leakage"' not in heron
    assert 'class="chart-ceiling"' in page  # dashed ceilings drawn
    ceiling = page.split('id="ceiling-heading"')[1].split("</section>")[0]
    assert re.search(r'<tr data-system="orca-7b-32k">.*?<td>32k</td>', ceiling, re.S)  # reads 32k whole


def test_ablation_deltas_per_level(scored, demo):
    page = page_of(scored, "/lveval")
    row = re.search(r'<tr data-variant="heron-13b-128k-no-cfi">(.*?)</tr>', page, re.S).group(1)
    assert "heron-13b-128k" in row and "without confusing-fact insertion" in row
    with demo.app_context():
        variant = ref.evaluate_folder(DEMO_LVEVAL / "heron-13b-128k-no-cfi")["row_scores"]
        base = ref.evaluate_folder(DEMO_LVEVAL / "heron-13b-128k")["row_scores"]
    # Both runs answer the same questions in the same order, so the 16k delta is the mean of dataset mean deltas.
    deltas = []
    for key, scores in variant.items():
        if key.endswith("_16k"):
            deltas.append(sum(v - b for v, b in zip(scores, base[key])) / len(scores))
    expected = 100 * sum(deltas) / len(deltas)
    cell = re.search(r'data-level="16k">([+-][0-9.]+)', row).group(1)
    assert float(cell) == pytest.approx(expected, abs=0.006)


def test_needle_depth_that_cannot_be_recovered_is_said_not_guessed(app, client, auth, tmp_path):
    folder = write_model(tmp_path, "no-depth", rows=6, datasets=["factrecall_en"])  # LV-Eval's own rows: no depth
    with app.app_context():
        import_models(folder)
        score_unscored_systems()
    auth.login("researcher")
    page = page_of(client, "/lveval")
    assert "the needle depth cannot be recovered from these files (30 rows" in page
    assert 'class="needle-heatmap"' in page and "needles-factrecall_en" not in page


def test_unknown_dataset_is_404_and_an_empty_page_explains(app, client, auth):
    auth.login("researcher")
    assert client.get("/lveval?dataset=narrativeqa_mixup").status_code == 404
    assert "No LV-Eval scores under the official profile yet" in page_of(client, "/lveval")
    assert client.get("/lveval?profile=paperish").status_code == 400


def test_lveval_is_staff_only(demo, client, auth):
    assert client.get("/lveval").status_code in (302, 401)
    auth.login("annotator")
    assert client.get("/lveval").status_code == 403


def test_json_export_has_the_keys_and_lvevals_table(scored):
    data = scored.get("/leaderboard/json").get_json()
    lveval = {entry["system"]: entry for entry in data["lveval"]}
    assert set(lveval) == {model for model, *_ in DEMO_MODELS}
    expected = ref.evaluate_folder(DEMO_LVEVAL / "orca-7b-32k")
    assert lveval["orca-7b-32k"]["result_json"] == expected["result_json"]
    assert lveval["orca-7b-32k"]["result_json_text"] == expected["result_json_text"]  # evaluation.py's order
    assert lveval["orca-7b-32k"]["result_csv"] == expected["result_csv_text"]
    assert lveval["orca-7b-32k"]["overall"] == ref.paper_averages(expected["table"])["overall"]
    leval = {entry["system"]: entry for entry in data["systems"]}
    assert set(leval) == {"balanced-34b", "shaky-3b", "terse-13b", "verbose-7b"}  # L-Eval's board
    assert leval["terse-13b"]["keys"] == {"context_window": None, "input_tokens": None, "retrieval": None,
                                          "prompt_engineering": None, "in_domain_data": None, "parameters": None,
                                          "links": []}


def _system_id(app, name: str) -> int:
    with app.app_context():
        return db.session.scalar(select(System.id).where(System.name == name))


def test_researchers_edit_the_keys_and_they_show_on_the_leaderboard(demo, client, auth):
    auth.login("researcher")
    system_id = _system_id(demo, "terse-13b")
    response = client.post(f"/leaderboard/systems/{system_id}/keys", data={
        "csrf_token": auth.token(), "context_window": "16k", "input_tokens": "15,500", "retrieval": "no",
        "prompt_engineering": "yes", "in_domain_data": "", "parameters": " 13B ",
        "links": "https://example.org/terse\n\nhttps://example.org/paper.pdf"})
    assert response.status_code == 302
    with demo.app_context():
        system = db.session.get(System, system_id)
        assert (system.context_window, system.input_tokens, system.retrieval, system.prompt_engineering,
                system.in_domain_data, system.parameters) == (16384, 15500, False, True, None, "13B")
        assert system.links == "https://example.org/terse\nhttps://example.org/paper.pdf"
    board = page_of(client, "/leaderboard")
    row = re.search(r'<tr data-system="terse-13b">(.*?)</tr>', board, re.S).group(1)
    assert 'data-key="context_window">16,384<' in row and 'data-key="parameters">13B<' in row
    assert "no · yes · —" in row and 'href="https://example.org/paper.pdf"' in row
    assert client.get("/leaderboard/json").get_json()["systems"][-1]["keys"] is not None


@pytest.mark.parametrize("field, value, message", [
    ("context_window", "lots", "Max-Ctx: expected a number of tokens"),
    ("context_window", "0", "Max-Ctx: expected a whole number of tokens"),
    ("retrieval", "maybe", "Ret.: choose yes, no or unknown"),
    ("links", "javascript:alert(1)", "Links: each line must be one http(s) URL"),
    ("parameters", "x" * 41, "Parameters: is 41 characters long; at most 40 are allowed"),
    ("parameters", "7\x00B", "Parameters: contains a NUL character"),
    ("links", "https://example.org/a\x00b", "Links: contains a NUL character"),
    ("variant_kind", "no_cfi", "Variant of: no system named"),
])
def test_bad_keys_are_refused_field_by_field_and_nothing_is_saved(demo, client, auth, field, value, message):
    auth.login("researcher")
    system_id = _system_id(demo, "terse-13b")
    response = client.post(f"/leaderboard/systems/{system_id}/keys",
                           data={"csrf_token": auth.token(), "parameters": "7B", field: value})
    assert response.status_code == 400
    page = response.get_data(as_text=True)
    assert message in page and 'role="alert"' in page
    with demo.app_context():
        assert db.session.get(System, system_id).parameters == ""


def test_tagging_an_ablation_and_refusing_a_cycle(demo, client, auth):
    auth.login("researcher")
    base, variant = _system_id(demo, "orca-7b-32k"), _system_id(demo, "wren-3b-8k")
    ok = client.post(f"/leaderboard/systems/{variant}/keys", data={
        "csrf_token": auth.token(), "variant_kind": "no_context", "variant_of": "orca-7b-32k"})
    assert ok.status_code == 302
    cycle = client.post(f"/leaderboard/systems/{base}/keys", data={
        "csrf_token": auth.token(), "variant_kind": "no_kpr", "variant_of": "wren-3b-8k"})
    assert cycle.status_code == 400 and "cannot be a variant of itself or of its own variant" in cycle.get_data(
        as_text=True)
    assert "with no context at all, a variant of orca-7b-32k" in page_of(client, f"/leaderboard/systems/{variant}")


def test_demo_keys_are_applied_once_and_never_over_an_edit(demo):
    with demo.app_context():
        wren = db.session.scalars(select(System).where(System.name == "wren-3b-8k")).one()
        assert (wren.context_window, wren.parameters, wren.in_domain_data) == (8192, "3B", True)
        no_cfi = db.session.scalars(select(System).where(System.name == "heron-13b-128k-no-cfi")).one()
        assert no_cfi.variant_kind == "no_cfi" and db.session.get(System, no_cfi.variant_of_id).name == "heron-13b-128k"
        wren.parameters = "3.1B"
        db.session.commit()
        from app.services.demo import load_demo

        load_demo()
        assert db.session.get(System, wren.id).parameters == "3.1B"
    assert set(DEMO_KEYS) == {model for model, *_ in DEMO_MODELS}


def test_overall_is_not_given_for_a_model_with_fewer_than_the_11_datasets(app, client, auth, tmp_path):
    """Issue 40, item 1: a one-dataset model's 'overall' was the mean of its one dataset, ranked beside complete ones."""
    complete = write_model(tmp_path, "complete-7b", rows=2, skill=0.2)
    partial = write_model(tmp_path, "one-dataset-7b", rows=2, skill=0.9, datasets=["cmrc_mixup"])
    with app.app_context():
        import_models(complete)
        import_models(partial)
        score_unscored_systems()
    auth.login("researcher")
    expected = ref.paper_averages(ref.evaluate_folder(complete)["table"])
    for url in ("/lveval", "/leaderboard?view=lveval"):
        page = page_of(client, url)
        cells = table_cells(page, "complete-7b")
        assert {level: cells[level] for level in expected["per_level"]} == {
            level: f"{value:.2f}" for level, value in expected["per_level"].items()}
        row = re.search(r'<tr data-system="one-dataset-7b">(.*?)</tr>', page, re.S).group(1)
        for level in ("16k", "32k", "64k", "128k", "256k"):
            cell = re.search(rf'data-level="{level}"[^>]*>(.*?)</td>', row, re.S).group(1)
            assert "1 of 11 datasets" in cell and "not LV-Eval's overall" in cell, (url, level, cell)
            assert not re.search(r">\s*\d+\.\d\d\s*<", cell), cell  # no number in the overall's place
        avg = re.search(r'data-level="avg"[^>]*>(.*?)</td>', row, re.S).group(1)
        assert not re.search(r">\s*\d+\.\d\d\s*<", avg), avg
        assert "one-dataset-7b</strong> (1 of 11)" in page  # the note above the table names it
    tab = page_of(client, "/leaderboard?view=lveval")
    assert tab.index('data-system="complete-7b"') < tab.index('data-system="one-dataset-7b"')  # ranked: complete first
    # Its own dataset keeps its number on the dataset's tab.
    assert re.match(r"\d+\.\d\d", table_cells(page_of(client, "/lveval?dataset=cmrc_mixup"), "one-dataset-7b")["16k"])
    lveval = {entry["system"]: entry for entry in client.get("/leaderboard/json").get_json()["lveval"]}
    assert lveval["complete-7b"]["complete"] is True and lveval["complete-7b"]["missing_datasets"] == []
    assert lveval["one-dataset-7b"]["complete"] is False and len(lveval["one-dataset-7b"]["missing_datasets"]) == 10
