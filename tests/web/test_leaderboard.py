"""The leaderboard: columns as in L-Eval, profile labels, per-task view, drill-down with escaped text, judge column."""
from __future__ import annotations

import re

import pytest
from sqlalchemy import select

from app.extensions import db
from app.models import MetricAggregate, Prediction, System
from app.services.metrics import score_system, score_unscored_systems
from tests.support.predictions import load_demo_data

HOSTILE = "<script>alert('x')</script><b>bold</b> & more"


@pytest.fixture
def scored(app, client, auth):
    load_demo_data(app)
    with app.app_context():
        score_unscored_systems()
    auth.login("researcher")
    return client


def ids(app) -> dict[str, int]:
    with app.app_context():
        return dict(db.session.execute(select(System.name, System.id)).all())


def value(app, name: str, task: str, metric: str, profile: str = "official") -> float:
    with app.app_context():
        return db.session.scalar(select(MetricAggregate.value).join(System).where(
            System.name == name, MetricAggregate.task == task, MetricAggregate.metric == metric,
            MetricAggregate.profile == profile))


def row_of(page: str, system: str) -> str:
    match = re.search(rf'<tr data-system="{re.escape(system)}">(.*?)</tr>', page, re.S)
    assert match, system
    return match.group(1)


def cell(row: str, metric: str) -> str:
    match = re.search(rf'data-metric="{metric}">(.*?)</td>', row, re.S)
    assert match, metric
    return re.sub(r"<[^>]+>", " ", match.group(1)).split()[0]


def test_leaderboard_columns_and_values(app, scored):
    page = scored.get("/leaderboard").get_data(as_text=True)
    for header in ("Exam avg", "F1 avg", "Avg length", "ΔL"):
        assert header in page
    # A column empty for every system is not shown: the demo has no rouge task and no judge run over tasks.
    for header in ("ROUGE-L avg", "LLM-judge win %", "Max-Ctx", "Ret. · PE · IDD"):
        assert header not in page
    assert 'data-field="profile">official<' in page and "<strong>official</strong> profile" in page
    row = row_of(page, "terse-13b")
    assert cell(row, "exact_match") == f"{value(app, 'terse-13b', '*', 'exact_match'):.2f}" == "87.50"
    assert cell(row, "f1") == f"{value(app, 'terse-13b', '*', 'f1'):.2f}"
    assert 'data-metric="rougeL"' not in row, "ROUGE-L averages task files only; the demo has no rouge task"
    assert cell(row, "avg_words") == f"{value(app, 'terse-13b', '*', 'avg_words'):.2f}"
    assert cell(row, "delta_words") == f"{value(app, 'terse-13b', '*', 'delta_words'):+.2f}"
    assert 'data-metric="judge"' not in row
    # Sorted by exam average by default: balanced-34b (100) first, shaky-3b (50) last.
    order = re.findall(r'<tr data-system="([^"]+)">', page)
    assert order[0] == "balanced-34b" and order[-1] == "shaky-3b"


def test_profile_switch_shows_the_fixed_numbers_and_says_so(app, scored):
    page = scored.get("/leaderboard?profile=fixed").get_data(as_text=True)
    assert 'data-field="profile">fixed<' in page and 'data-profile="fixed"' in page
    assert cell(row_of(page, "verbose-7b"), "exact_match") == f"{value(app, 'verbose-7b', '*', 'exact_match', 'fixed'):.2f}"
    assert "What the fixed profile changes" in page
    assert scored.get("/leaderboard?profile=nonsense").status_code == 400  # as on the other results pages


def test_per_task_view(app, scored):
    page = scored.get("/leaderboard?view=tasks").get_data(as_text=True)
    for heading in ("quality", "scientific_qa", "Human-eval subset"):
        assert heading in page
    row = row_of(page, "shaky-3b")
    quality = re.search(r'data-task="quality">(.*?)</td>', row, re.S).group(1)
    assert f"{value(app, 'shaky-3b', 'quality', 'exact_match'):.2f}" in quality
    page = scored.get("/leaderboard?view=tasks&metric=rougeL").get_data(as_text=True)
    assert "Human-eval subset" in page and "quality" not in re.sub(r"<select.*?</select>", "", page, flags=re.S)


def test_clicking_a_number_shows_per_question_values(app, scored):
    page = scored.get("/leaderboard").get_data(as_text=True)
    link = re.search(r'data-metric="exact_match">\s*<a href="([^"]+)"', row_of(page, "shaky-3b")).group(1)
    detail = scored.get(link.replace("&amp;", "&")).get_data(as_text=True)
    values = re.findall(r'data-field="value"[^>]*>([^<]+)<', detail)
    assert len(values) == 8 and sum(float(v) for v in values) / 8 == pytest.approx(50.0)
    assert "Reference used for scoring (gt)" in detail and 'data-field="prediction"' in detail
    assert "official profile" in detail
    low_first = scored.get(link.replace("&amp;", "&") + "&sort=low").get_data(as_text=True)
    assert re.findall(r'data-field="value"[^>]*>([^<]+)<', low_first)[0] == "0.00"


def test_human_eval_drill_down_shows_all_three_references(app, scored):
    system = ids(app)["terse-13b"]
    page = scored.get(f"/leaderboard/systems/{system}/questions?task=human_eval&metric=rougeL").get_data(as_text=True)
    assert page.count('data-field="value"') == 10
    assert "GPT-4-32k reference" in page and "Claude-100k reference" in page


def test_untrusted_text_is_escaped(app, scored):
    with app.app_context():
        system = db.session.scalars(select(System).where(System.name == "terse-13b")).one()
        prediction = db.session.scalars(select(Prediction).where(Prediction.system_id == system.id,
                                                                 Prediction.evaluation == "f1")).first()
        prediction.text = HOSTILE
        db.session.commit()
        score_system(system.id)
    page = scored.get(f"/leaderboard/systems/{ids(app)['terse-13b']}/questions?task=scientific_qa&metric=f1")
    text = page.get_data(as_text=True)
    assert "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&lt;b&gt;bold&lt;/b&gt; &amp; more" in text
    assert "<script>alert" not in text and "<b>bold</b>" not in text


def test_system_page_lists_tasks_with_profile(app, scored):
    page = scored.get(f"/leaderboard/systems/{ids(app)['verbose-7b']}?profile=fixed").get_data(as_text=True)
    assert 'data-task="*"' in page and 'data-task="quality"' in page and 'data-task="human_eval"' in page
    assert "<strong>fixed</strong> profile" in page


def test_judge_column_uses_win_rates_when_available(app, scored, monkeypatch):
    rates = {"terse-13b": [{"judge_model": "judge-x", "prompt_version": 2, "win_rate": 61.25},
                           {"judge_model": "judge-y", "prompt_version": 1, "win_rate": 40.0}]}
    monkeypatch.setattr("app.services.metrics.leaderboard.win_rates", lambda: rates)
    page = scored.get("/leaderboard").get_data(as_text=True)
    row = row_of(page, "terse-13b")
    assert cell(row, "judge") == "61.25" and "judge-x · default · v2" in row and "(+1)" in row
    assert cell(row_of(page, "shaky-3b"), "judge") == "—"
    data = scored.get("/leaderboard/json").get_json()
    terse = next(s for s in data["systems"] if s["system"] == "terse-13b")
    assert terse["judge"][0]["win_rate"] == 61.25


def test_json_export_labels_the_profile(app, scored):
    data = scored.get("/leaderboard/json?profile=fixed").get_json()
    assert data["profile"] == "fixed" and all(s["profile"] == "fixed" for s in data["systems"])
    terse = next(s for s in data["systems"] if s["system"] == "terse-13b")
    assert terse["metrics"]["exact_match"] == {"value": value(app, "terse-13b", "*", "exact_match", "fixed"),
                                               "n": 8, "tasks": 1}
    assert terse["judge"] == []  # the judge is installed but has not judged this system


def test_unscored_systems_are_listed(app, client, auth):
    load_demo_data(app)
    auth.login("admin")
    page = client.get("/leaderboard").get_data(as_text=True)
    assert "not scored" in row_of(page, "terse-13b")


def test_leaderboard_is_staff_only(app, client, auth):
    auth.login("annotator")
    assert client.get("/leaderboard").status_code == 403
    assert client.get("/leaderboard/json").status_code == 403
    assert client.get("/leaderboard/systems/1/questions?task=*&metric=f1").status_code == 403


def test_bad_drill_down_arguments(app, scored):
    system = ids(app)["terse-13b"]
    assert scored.get(f"/leaderboard/systems/{system}/questions?task=*&metric=nope").status_code == 404
    assert scored.get("/leaderboard/systems/99999").status_code == 404
    page = scored.get(f"/leaderboard/systems/{system}/questions?task=*&metric=f1&page=99").get_data(as_text=True)
    assert page.count('data-field="value"') == 4  # clamped to the last page


def test_the_human_eval_subset_has_its_own_column_group(app, scored, monkeypatch):
    rates = {"terse-13b": [{"judge_model": "judge-x", "prompt_version": 1, "win_rate": 70.0, "scope": "all",
                            "baseline": "shaky-3b"},
                           {"judge_model": "judge-x", "prompt_version": 1, "win_rate": 55.5, "scope": "human_eval",
                            "baseline": "shaky-3b"}]}
    monkeypatch.setattr("app.services.metrics.leaderboard.win_rates", lambda: rates)
    page = scored.get("/leaderboard").get_data(as_text=True)
    assert 'id="group-subset" class="group-subset">Human-evaluation subset</th>' in page
    row = row_of(page, "terse-13b")

    def subset(metric: str) -> str:
        match = re.search(rf'data-subset-metric="{metric}">(.*?)</td>', row, re.S)
        return re.sub(r"<[^>]+>", " ", match.group(1)).split()[0]

    for metric in ("f1", "rougeL", "avg_words"):
        assert subset(metric) == f"{value(app, 'terse-13b', 'human_eval', metric):.2f}"
    assert subset("delta_words") == f"{value(app, 'terse-13b', 'human_eval', 'delta_words'):+.2f}"
    assert subset("judge") == "55.50"  # the run on the subset, not the one on all questions
    # With task averages present the board still sorts by exam and keeps the subset last.
    order = re.findall(r'<tr data-system="([^"]+)">', page)
    assert order[0] == "balanced-34b" and page.index('id="group-tasks"') < page.index('id="group-subset"')
    by_subset = scored.get("/leaderboard?sort=human_eval:f1").get_data(as_text=True)
    f1 = {s: value(app, s, "human_eval", "f1") for s in re.findall(r'<tr data-system="([^"]+)">', by_subset)}
    assert list(f1.values()) == sorted(f1.values(), reverse=True)
    data = scored.get("/leaderboard/json").get_json()
    terse = next(s for s in data["systems"] if s["system"] == "terse-13b")
    assert terse["human_eval"]["f1"] == {"value": value(app, "terse-13b", "human_eval", "f1"), "n": 10}


def test_subset_judge_rate_is_its_own_column_and_empty_columns_drop():
    """Item 12 and 3: a judge run on the human-eval subset feeds the subset's column, never the tasks' judge
    column or its sort; a column empty for every row is left out of the board."""
    from app.services.metrics.leaderboard import LeaderboardRow, leaderboard_columns, sort_rows

    subset_run = {"scope": "human_eval", "win_rate": 61.0, "baseline": "b"}
    only_subset = LeaderboardRow(1, "subset-only", 85, subset={"f1": (30.0, 85)}, judge=[subset_run])
    with_tasks = LeaderboardRow(2, "tasks", 900, values={"f1": (40.0, 800)}, keys={"parameters": "13B"},
                                judge=[{"scope": "all", "win_rate": 55.0, "baseline": "b"}])
    assert only_subset.task_judge is None and only_subset.subset_judge == subset_run
    assert with_tasks.task_judge["win_rate"] == 55.0 and with_tasks.subset_judge is None
    assert [row.system for row in sort_rows([only_subset, with_tasks], "judge")] == ["tasks", "subset-only"]
    columns = leaderboard_columns([only_subset, with_tasks])
    assert columns == {"keys": ("parameters",), "tasks": ("f1", "judge", "predictions"), "subset": ("f1", "judge")}
    assert leaderboard_columns([only_subset])["tasks"] == ("predictions",)
