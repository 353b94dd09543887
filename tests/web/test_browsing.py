"""Long lists, browsed on the server (issue 40, item 6): the per-question values in the file's order, with a search
and a document filter; the Predictions page's systems with a search and a status filter, and the hint that two
spellings may be one model; the Disagreements page with a search, a task filter and pages."""
from __future__ import annotations

import json
import re

import pytest
from sqlalchemy import select

from app.core.text import lookalike_groups, matches_search, search_terms
from app.extensions import db
from app.models import Document, Prediction, Question, System
from app.services import demo
from app.services.importers import import_path
from app.services.metrics import score_system
from tests.support.scoring_data import generate_metric_results, generate_scores
from tests.support.shared import HUMAN_EVAL, require_human_eval
from tests.support.study_data import write_study_set

WHERE_RE = re.compile(r'data-field="where">.*?line (\d+) ·', re.S)


def _system_id(app, name: str) -> int:
    with app.app_context():
        return db.session.scalar(select(System.id).where(System.name == name))


@pytest.fixture
def subset(app):
    require_human_eval()
    with app.app_context():
        assert not import_path(HUMAN_EVAL).failed
        score_system(db.session.scalar(select(System.id).where(System.name == "turbo-16k-0613")),
                     profiles=("official",))
        db.session.commit()
    return app


def test_file_order_is_the_order_of_the_file(subset, client, auth):
    """It was ordered by task first: L-Eval's subset file goes narrative_qa, meeting_summ, …, so "file order"
    began with financial's lines."""
    auth.login("researcher")
    url = f"/leaderboard/systems/{_system_id(subset, 'turbo-16k-0613')}/questions?metric=f1&task=human_eval"
    first = client.get(url).get_data(as_text=True)
    second = client.get(url + "&page=2").get_data(as_text=True)
    lines = [int(n) for n in WHERE_RE.findall(first) + WHERE_RE.findall(second)]
    assert lines == list(range(1, 86))
    assert "<code>turbo-16k-0613.pred.jsonl</code> line 1 ·" in first


def test_the_per_question_values_are_searched_and_filtered_by_document(subset, client, auth):
    auth.login("researcher")
    system_id = _system_id(subset, "turbo-16k-0613")
    url = f"/leaderboard/systems/{system_id}/questions?metric=f1&task=human_eval&sort=low"
    with subset.app_context():
        rows = db.session.execute(select(Question.instruction, Prediction.text, Document.title, Document.id)
                                  .join(Prediction, Prediction.question_id == Question.id)
                                  .join(Document, Document.id == Question.document_id)
                                  .where(Prediction.system_id == system_id)).all()
    for query in ("Meeting", "the company revenue", "ZZZ-not-there"):
        expected = sum(matches_search(search_terms(query), *row[:3]) for row in rows)
        page = client.get(url + f"&q={query}").get_data(as_text=True)
        assert f"{expected} of 85 values match" in page, query
        shown = len(WHERE_RE.findall(page))
        assert shown == min(expected, 50)
        assert ("No per-question value matches the filter" in page) == (expected == 0)
        assert 'name="sort" value="low"' in page and f'value="{query}"' in page  # the filter keeps the order
    document_id, title = rows[0][3], rows[0][2]
    page = client.get(url + f"&document={document_id}").get_data(as_text=True)
    expected = sum(1 for row in rows if row[3] == document_id)
    assert f"{expected} of 85 values match" in page and len(WHERE_RE.findall(page)) == expected
    assert re.search(rf'<option value="{document_id}" selected>', page)


def test_a_chinese_search_finds_chinese_predictions(app, client, auth, tmp_path):
    folder = write_study_set(tmp_path / "set", documents=1, questions_each=3, systems=("north-1b",))
    path = folder / "north-1b.pred.jsonl"
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    rows[1]["north-1b_pred"] = "灯塔的看守人记下了十四位访客。"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    with app.app_context():
        assert not import_path(folder).failed
        score_system(db.session.scalar(select(System.id)), profiles=("official",))
        db.session.commit()
    auth.login("researcher")
    url = f"/leaderboard/systems/{_system_id(app, 'north-1b')}/questions?metric=f1&task=human_eval"
    page = client.get(url + "&q=看守人").get_data(as_text=True)
    assert "1 of 3 values match" in page and "灯塔的看守人" in page
    assert "0 of 3 values match" in client.get(url + "&q=看守人%20灯笼").get_data(as_text=True)  # every word


def test_the_systems_list_is_searched_and_two_spellings_of_one_model_are_pointed_out(app, client, auth, tmp_path):
    folder = write_study_set(tmp_path / "set", documents=1, questions_each=2,
                             systems=("Claude-100k", "claude-100k", "claude_100k-v2", "gpt4-32k"))
    with app.app_context():
        assert not import_path(folder).failed
        score_system(db.session.scalar(select(System.id).where(System.name == "gpt4-32k")), profiles=("official",))
        db.session.commit()
    auth.login("researcher")
    page = client.get("/predictions").get_data(as_text=True)
    note = page.split('data-field="lookalikes">')[1].split("</p>")[0]
    assert "<strong>Claude-100k</strong> and <strong>claude-100k</strong>" in note and "may be one model" in note
    assert "claude_100k-v2" not in note and "gpt4-32k" not in note
    board = client.get("/leaderboard").get_data(as_text=True)
    assert "<strong>Claude-100k</strong> and <strong>claude-100k</strong>" in board.split('data-field="lookalikes">')[1]
    found = client.get("/predictions?q=CLAUDE").get_data(as_text=True)
    assert "3 of 4 systems match" in found and 'data-system="gpt4-32k"' not in found
    scored = client.get("/predictions?status=scored").get_data(as_text=True)
    assert re.findall(r'<tr data-system-id="\d+" data-system="([^"]+)"', scored) == ["gpt4-32k"]
    none = client.get("/predictions?q=llama").get_data(as_text=True)
    assert "0 of 4 systems match" in none and "No system matches the filter" in none
    assert lookalike_groups(["Claude-100k", "claude-100k", "Claude 100K", "claude-100k-v2"]) == [
        ["Claude 100K", "Claude-100k", "claude-100k"]]


@pytest.fixture
def scored_demo(app):
    with app.app_context():
        demo.load_demo()
        generate_scores(["ann1", "ann2"], seed=11)
        generate_metric_results(seed=13)
    return app


def test_disagreements_are_searched_filtered_by_task_and_paged(scored_demo, client, auth):
    auth.login("researcher")
    url = "/results/disagreements?metric=rougeL"
    everything = client.get(url).get_data(as_text=True)
    total = int(re.search(r'data-field="matching">(\d+) questions, largest gap first', everything).group(1))
    assert total == 10 and everything.count('class="card disagreement"') == 10
    gaps = re.findall(r"gap (\d\.\d\d)", everything)
    assert gaps == sorted(gaps, reverse=True)
    with scored_demo.app_context():
        questions = db.session.execute(select(Question.instruction, Document.title, Document.task).join(
            Document, Document.id == Question.document_id).where(Document.is_demo.is_(True),
                                                                Document.collection == "human_eval")).all()
    word = questions[0][0].split()[-1]
    expected = sum(matches_search(search_terms(word), q, t) for q, t, _ in questions)
    page = client.get(url + f"&q={word}").get_data(as_text=True)
    assert f"{expected} of 10 questions match" in page and page.count('class="card disagreement"') == expected
    task = questions[0][2]
    page = client.get(url + f"&task={task}").get_data(as_text=True)
    assert page.count(f'<span class="badge">{task}</span>') == page.count('class="card disagreement"') > 0
    by_system = client.get(url + "&q=terse-13b").get_data(as_text=True)
    assert "10 of 10 questions match" in by_system  # every question ranks that system
    empty = client.get(url + "&q=nothing-like-this").get_data(as_text=True)
    assert "No question matches the filter" in empty
    with scored_demo.app_context():
        from app.services.results.browse import browse_disagreements
        from app.services.studies.lookup import require_study

        study_id = require_study().id
        pages = [browse_disagreements(study_id, "rougeL", "all", "official", page=n, per_page=4) for n in (1, 2, 3)]
    assert [len(p.rows) for p in pages] == [4, 4, 2] and pages[0].pages == 3
    assert [f"{r['gap']:.2f}" for p in pages for r in p.rows] == gaps
