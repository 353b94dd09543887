"""L-Eval's Table 2, live: the page and the `results` export key equal direct computations from the files."""
from __future__ import annotations

import json

import pytest
from sqlalchemy import select

from app.extensions import db
from app.core.metrics import evaluate_file
from app.models import System
from app.services.importers import import_path
from app.services.metrics import score_system
from app.services.results.assemble import full_results
from app.services.studies.setup import StudySpec, create_study, questions_for
from tests.support import leval_judge_reference as oracle
from tests.conftest import require_shared
from tests.support.baselines_layout import build_layout
from tests.support.openai_stub import StubOpenAIServer
from tests.services.test_fidelity_judge import scripted

TASKS = ["financial_qa", "gov_report_summ"]
MODELS = ["turbo-16k-0613", "llama2-13b-chat-4k", "vicuna-13b-16k-flash"]


@pytest.fixture
def table_app(app, runner, tmp_path, monkeypatch):
    shared = require_shared()
    layout = build_layout(shared, tmp_path / "layout", tasks=TASKS, models=MODELS)
    data = tmp_path / "data" / "Open-ended-tasks"
    data.mkdir(parents=True)
    for task in TASKS:
        (data / f"{task}.jsonl").write_bytes((shared / "LEval-data" / "Open-ended-tasks" / f"{task}.jsonl").read_bytes())
    with app.app_context():
        assert not import_path(data.parent).failed and not import_path(layout.root).failed
        for system in db.session.scalars(select(System)):
            system.length_instruction = system.name == "vicuna-13b-16k-flash"
            score_system(system.id, profiles=("official", "fixed"))
        db.session.commit()
        study = create_study(StudySpec(name="Table 2", question_ids=questions_for("task:financial_qa"), status="open"))
        study_id = study.id
    with StubOpenAIServer(policy=lambda body: scripted(body["messages"])) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-table2-test-0123456789")
        for model in ("llama2-13b-chat-4k", "vicuna-13b-16k-flash"):
            result = runner.invoke(args=["judge", model, "--battle-with", "turbo-16k-0613", "--profile", "leval",
                                         "--scope", "all", "--json"])
            assert result.exit_code == 0, result.output
    return app, layout, study_id


def test_table2_page_equals_the_files_and_llm_eval(table_app, client, auth):
    app, layout, study_id = table_app
    auth.login("researcher")
    page = client.get(f"/results/table2?study={study_id}").get_data(as_text=True)
    assert 'data-field="judge-profile">leval' in page
    rows = {}
    for model in MODELS:
        row = page.split(f'data-system="{model}"')[1].split("</tr>")[0]
        rows[model] = row
    # Without the length instruction first, then with it.
    assert page.index('data-system="vicuna-13b-16k-flash"') > page.index('data-system="turbo-16k-0613"')
    assert 'data-length-instruction="yes"' in rows["vicuna-13b-16k-flash"]
    for model in MODELS:
        for task in TASKS:
            expected = evaluate_file(layout.file(model, task).path)["metrics"]
            metric = "rougeL" if task == "gov_report_summ" else "f1"
            assert f'data-cell="{task}:metric">{expected[metric]:.2f}<' in rows[model]
            assert f'data-cell="{task}:delta_words">{expected["delta_words"]:.2f}<' in rows[model]
    for model in ("llama2-13b-chat-4k", "vicuna-13b-16k-flash"):
        for task in TASKS:
            reference = oracle.run_llm_eval(layout.file(model, task).path, layout.file("turbo-16k-0613", task).path,
                                            scripted)
            name = oracle.construct_pairs(layout.file(model, task).path, layout.file("turbo-16k-0613", task).path)[1]
            rate = reference.win_rates.get(name.replace("_pred", ""))
            if rate is not None:
                assert f'data-cell="{task}:win_rate" title="' in rows[model]
                assert f'{100 * rate:.2f}</td>' in rows[model].split(f'data-cell="{task}:win_rate"')[1][:80]
    assert "no leval run" in rows["turbo-16k-0613"]
    other = client.get(f"/results/table2?study={study_id}&judge=default").get_data(as_text=True)
    assert "no default run" in other
    assert client.get(f"/results/table2?study={study_id}&judge=bogus").status_code == 400


def test_table2_is_a_key_of_the_results_export(table_app):
    app, layout, study_id = table_app
    with app.app_context():
        data = full_results(study_id, n_resamples=50)
    table = data["table2"]["official"]["leval"]
    assert [t["task"] for t in table["tasks"]] == TASKS
    assert [t["metric_label"] for t in table["tasks"]] == ["F-1", "R-L"]
    turbo = next(r for r in table["rows"] if r["system"] == "turbo-16k-0613")
    expected = evaluate_file(layout.file("turbo-16k-0613", "financial_qa").path)["metrics"]["f1"]
    assert turbo["cells"]["financial_qa"]["metric"] == expected
    assert json.loads(json.dumps(data))["table2"]["fixed"]["default"]["judge_profile"] == "default"


def test_empty_table2_after_the_readme_path_names_the_missing_task_files(app, client, auth, tmp_path):
    """Issue 40, item 2: after importing the human-eval subset (the README's path) Table 2 was empty and told the
    researcher to score predictions that were scored; the cause is the task files, and it says what to run."""
    from tests.support.shared import require_human_eval

    human_eval = require_human_eval()
    shared = require_shared()
    with app.app_context():
        assert not import_path(human_eval).failed
        for system in db.session.scalars(select(System)):
            score_system(system.id, profiles=("official",))
        db.session.commit()
        study_id = create_study(StudySpec(name="L-Eval human evaluation", status="open")).id
    auth.login("researcher")

    def empty() -> tuple[str, str]:
        page = client.get(f"/results/table2?study={study_id}").get_data(as_text=True)
        block = page.split('data-field="table2-empty"')[1].split("</div>")[0]
        return block.split('data-reason="')[1].split('"')[0], " ".join(block.split())

    reason, text = empty()
    assert reason == "no_task_files"
    assert "python run.py import-leval LEval" in text and "task files are not imported" in text
    assert "Score their predictions" not in text  # the old advice, wrong here: they are scored
    # The task file alone: now the study's systems lack task predictions.
    data = tmp_path / "data" / "Open-ended-tasks"
    data.mkdir(parents=True)
    (data / "financial_qa.jsonl").write_bytes(
        (shared / "LEval-data" / "Open-ended-tasks" / "financial_qa.jsonl").read_bytes())
    layout = build_layout(shared, tmp_path / "layout", tasks=["financial_qa"], models=["turbo-16k-0613"])
    with app.app_context():
        assert not import_path(data.parent).failed
    reason, text = empty()
    assert reason == "no_task_predictions" and "turbo-16k-0613" in text and "Predictions/ngram_eval" in text
    # Its predictions, not scored yet: the message names the system and the metrics job.
    with app.app_context():
        assert not import_path(layout.root).failed
    reason, text = empty()
    assert reason == "not_scored" and "turbo-16k-0613" in text and "score-metrics" in text
    with app.app_context():
        score_system(db.session.scalar(select(System.id).where(System.name == "turbo-16k-0613")), profiles=("official",))
        db.session.commit()
    page = client.get(f"/results/table2?study={study_id}").get_data(as_text=True)
    assert 'data-field="table2-empty"' not in page and 'data-system="turbo-16k-0613"' in page
