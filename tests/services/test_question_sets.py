"""Question sets have one owner: studies and generation runs take the same questions for every set name."""
from __future__ import annotations

import json
import random

import pytest
from sqlalchemy import select

from app.extensions import db
from app.models import GenerationRun, Study, StudyQuestion
from app.services import question_sets as sets
from app.services.generation.spec import GenerationError, RunSpec, prepare
from app.services.studies import setup
from app.services.studies.setup import StudyError
from tests.support import leval_prompt_reference as ref


@pytest.fixture(autouse=True)
def _estimate_tokens(monkeypatch):
    monkeypatch.setenv("LEVAL_TOKENIZER", "estimate")


def _task_files(rng: random.Random) -> dict[str, list[dict]]:
    files = {}
    for task in ("legal_contract_qa", "financial_qa", "coursera"):
        rows = []
        for line in range(5):
            k = rng.randint(1, 3)
            evaluation = "exam" if task == "coursera" else rng.choice(["human", "LLM", "f1"])
            rows.append({"instructions": [f"{task} {line} question {i}?" for i in range(k)],
                         "outputs": [f"{task} {line} answer {i}" for i in range(k)],
                         "input": f"{task} document {line} " + "words " * rng.randint(5, 40),
                         "source": task, "evaluation": evaluation})
        # The exam task also marks one line LLM: L-Eval's subsets read open-ended tasks only.
        if task == "coursera":
            rows[0]["evaluation"] = "LLM"
        files[task] = rows
    return files


@pytest.fixture
def loaded(demo, runner, tmp_path):
    files = _task_files(random.Random(11))
    folder = tmp_path / "tasks"
    folder.mkdir()
    for task, rows in files.items():
        (folder / f"{task}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    result = runner.invoke(args=["import-leval", str(folder)])
    assert result.exit_code == 0, result.output
    return demo, files


def _pairs(questions) -> list[tuple[str, str]]:
    return [(q.instruction, q.reference) for q in questions]


def _lines(rows: list[dict]) -> list[tuple[str, str]]:
    return [(i, o) for d in rows for i, o in zip(d["instructions"], d["outputs"])]


def test_every_set_holds_what_leval_selects(loaded):
    app, files = loaded
    open_files = {t: rows for t, rows in files.items() if t != "coursera"}
    with app.app_context():
        assert _pairs(sets.select_questions("gpt4")) == _lines(ref.subset_rows("llm_gpt4_eval", open_files))
        assert _pairs(sets.select_questions("gpt35")) == _lines(ref.subset_rows("llm_turbo_eval", open_files))
        for task in ("financial_qa", "legal_contract_qa"):
            assert _pairs(sets.select_questions(f"task:{task}")) == \
                _lines(ref.task_rows("ngram_eval", task, files, task_name_given=True))
            assert _pairs(sets.select_questions(f"auto:{task}")) == _lines(ref.task_rows("ngram_eval", task, files))
        assert _pairs(sets.select_questions("auto:coursera")) == _lines(ref.task_rows("exam_eval", "coursera", files))
        assert len(sets.select_questions("human_eval")) == 10  # only the demo's subset is imported
        listed = {entry["name"]: entry["count"] for entry in sets.available_sets()}
        assert listed["task:coursera"] == len(_lines(files["coursera"]))
        assert listed["auto:financial_qa"] == len(_lines(ref.task_rows("ngram_eval", "financial_qa", files)))


def test_studies_and_generation_take_the_same_questions(loaded, runner, stub):
    app, _ = loaded
    with app.app_context():
        demo_study = db.session.scalars(select(Study).where(Study.is_demo.is_(True))).one()
        some = [q.question_id for q in sets.select_questions("task:legal_contract_qa")][::-2]
        names = ["human_eval", "demo", "gpt4", "gpt35", "task:financial_qa", "auto:financial_qa",
                 f"study:{demo_study.id}", "ids:" + ",".join(map(str, some))]
        for name in names:
            owned = sets.question_ids(name)
            assert owned, name
            assert setup.questions_for(name) == owned, name
            planned = prepare(RunSpec(base_url=stub.base_url, model="m", question_set=name, system_name="s"))
            assert [planned_q.item.question_id for planned_q in planned.run.questions] == owned, name
        assert setup.questions_for("") == sets.question_ids("human_eval")
        assert sets.question_ids("ids:" + ",".join(map(str, some))) == some  # in the order given
        study_choices = [choice for choice, _, _ in setup.question_sets()]
        assert study_choices == [entry["name"] for entry in sets.available_sets()]
        gpt4 = sets.question_ids("gpt4")
    # A study created from a set holds exactly its questions, in its order.
    result = runner.invoke(args=["study", "create", "Judge subset", "--questions", "gpt4"])
    assert result.exit_code == 0, result.output
    with app.app_context():
        study = db.session.scalars(select(Study).where(Study.name == "Judge subset")).one()
        held = list(db.session.scalars(select(StudyQuestion.question_id).where(StudyQuestion.study_id == study.id)
                                       .order_by(StudyQuestion.position)))
    assert held == gpt4


def test_a_per_task_download_is_named_after_the_task(loaded, runner, stub):
    app, files = loaded
    result = runner.invoke(args=["generate", "--base-url", stub.base_url, "--model", "m", "--system", "m-auto",
                                 "--questions", "auto:financial_qa", "--json"])
    assert result.exit_code == 0, result.output
    from app.services.generation.store import pred_file

    with app.app_context():
        run = db.session.get(GenerationRun, json.loads(result.output.splitlines()[-1])["run_id"])
        name, text, rows, missing = pred_file(run)
    expected = _lines(ref.task_rows("ngram_eval", "financial_qa", files))
    assert (name, rows, missing) == ("financial_qa.pred.jsonl", len(expected), 0)
    assert [(r["query"], r["gt"]) for r in map(json.loads, text.splitlines())] == expected


@pytest.mark.parametrize("name, says", [
    ("everything", "unknown question set 'everything'"),
    ("task:no_such_task", "no imported task named 'no_such_task'"),
    ("auto:no_such_task", "no imported task named 'no_such_task'"),
    ("study:nobody", "study: takes a study's id, e.g. study:3"),  # a name is never read as an id, nor the reverse
    ("study:999999", "no study with id 999999"),
    ("study:¹", "study: takes a study's id"),
    ("ids:1,x", "ids: takes question ids"),
    ("ids:999999", "no such question: 999999"),
    ("authored", "no authored pairs yet"),
])
def test_a_bad_set_is_refused_the_same_way_by_both(demo, stub, name, says):
    with demo.app_context():
        with pytest.raises(StudyError, match=says):
            setup.questions_for(name)
        with pytest.raises(GenerationError, match=says):
            prepare(RunSpec(base_url=stub.base_url, model="m", question_set=name, system_name="s"))


def test_the_study_page_offers_the_owners_sets(loaded, client, auth):
    app, _ = loaded
    auth.login("researcher")
    response = client.get("/studies/new")
    assert response.status_code == 200
    page = response.get_data(as_text=True)
    with app.test_request_context("/studies/new"):
        from app.services import demo_scope

        demo_scope.enter(demo_scope.AUTO)  # the page's own view: real data was imported, so the demo is kept apart
        assert sets.available_sets(), "the imported tasks make sets"
        for entry in sets.available_sets():
            assert f'value="{entry["name"]}"' in page
