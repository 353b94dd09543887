"""Results pages and services: DB loading, statistics checked against scipy/krippendorff, access, escaping."""
from __future__ import annotations

import json
from collections import defaultdict

import krippendorff
import numpy as np
import pytest
from scipy import stats
from sqlalchemy import func, select, text, update

from app.extensions import db
from app.models import Document, MetricResult, Prediction, Question, System
from app.models.corpus import HUMAN_EVAL
from app.services import demo
from app.core.stats.agreement import IDENTICAL_RATINGS
from app.services.importers import import_path
from app.services.studies.lookup import require_study
from app.services.studies.setup import StudySpec, create_study
from app.services.results import analyse, disagreements, load_current_scores
from app.services.judge import RunSpec, current_prompt, save_settings
from app.services.judge.prompt_versions import create_version
from app.services.judge.job import execute, prepare_run, record_finished_run
from app.services.results.judge_rates import load_win_rates
from app.services.results.metric_values import length_deltas, metric_means
from tests.support.judge_data import answers_in
from tests.support.openai_stub import StubOpenAIServer
from tests.support.scoring_data import generate_metric_results, generate_scores
from tests.services.test_importers import write_jsonl

PAGES = ["/results", "/results/correlation", "/results/agreement", "/results/disagreements",
         "/results/length-instruction", "/results/exports", "/results/export/scores.jsonl",
         "/results/export/scores.csv", "/results/export/results.json",
         "/results/length-instruction/prompts.jsonl"]

# Raw SQL, independent of the service's ORM query: current = each annotator's highest round number.
# A score counts when the study shows the answer version it was given for.
CURRENT_SCORES_SQL = text("""
    SELECT u.username, sy.name, q.id, s.value FROM scores s
    JOIN annotation_rounds r ON r.id = s.round_id
    JOIN users u ON u.id = r.annotator_id
    JOIN answers a ON a.id = s.answer_id
    JOIN study_answers sa ON sa.answer_id = a.id AND sa.study_id = r.study_id AND NOT sa.excluded
    JOIN systems sy ON sy.id = a.system_id
    JOIN questions q ON q.id = a.question_id
    WHERE r.number = (SELECT max(r2.number) FROM annotation_rounds r2
                      WHERE r2.annotator_id = r.annotator_id AND r2.study_id = r.study_id)
""")


def S() -> int:
    """The study the test's data is in (the only one)."""
    return require_study().id


def raw_scores() -> list[tuple[str, str, int, int]]:
    return [tuple(row) for row in db.session.execute(CURRENT_SCORES_SQL)]


def raw_system_means(rows) -> dict[str, float]:
    by_system = defaultdict(list)
    for _, system, _, value in rows:
        by_system[system].append(value)
    return {system: float(np.mean(values)) for system, values in by_system.items()}


@pytest.fixture
def scored_demo(app):
    """The demo set, three annotators (one unfinished) and metric values for both profiles."""
    with app.app_context():
        demo.load_demo()
        generate_scores(["ann1", "ann2"], seed=11)
        generate_scores(["ann3"], seed=12, coverage=0.6)
        generate_metric_results(seed=13)
    return app


def seven_systems(app, tmp_path, quality: dict[str, float], noise: float, coverage: float = 1.0):
    """Seven systems answering a four-question document, scored by three annotators."""
    reference = {
        "instructions": [f"Question {i} about the harbour?" for i in range(4)],
        "outputs": ["The harbour is calm and the boat is red.", "Mira.", "Every morning at six.", "Two boats."],
        "gpt4_outputs": ["Calm.", "Mira.", "Mornings.", "Two."],
        "claude_outputs": ["It is calm.", "Mira sails.", "At six.", "There are two."],
        "input": "Mira owns a red boat. She sails it every morning at six.\n\nThe harbour is calm.",
        "source": "multidoc_qa", "evaluation": "human",
    }
    folder = tmp_path / "seven"
    folder.mkdir()
    write_jsonl(folder / "harbour.ref.jsonl", [reference])
    for s, name in enumerate(sorted(quality)):
        write_jsonl(folder / f"{name}.pred.jsonl", [
            {"query": q, "gt": gt, f"{name}_pred": " ".join(["word"] * (3 + 4 * s + i)), "evaluation": "human"}
            for i, (q, gt) in enumerate(zip(reference["instructions"], reference["outputs"]))
        ])
    with app.app_context():
        assert not import_path(folder).failed
        create_study(StudySpec(name="Harbour", status="open"))
        for a, name in enumerate(["a1", "a2", "a3"]):
            generate_scores([name], seed=20 + a, noise=noise, quality=quality, coverage=coverage if a == 2 else 1.0)


def login(client, auth, role="researcher"):
    auth.login(role)
    return client


def test_pages_are_staff_only(client, auth, scored_demo):
    for url in PAGES:
        assert client.get(url).status_code == 302, url  # anonymous: sent to sign in
    auth.login("annotator")
    for url in PAGES + ["/results/export/leval/ann1"]:
        assert client.get(url).status_code == 403, url
    auth.logout()
    auth.login("researcher")
    for url in PAGES + ["/results/export/leval/ann1"]:
        assert client.get(url).status_code == 200, url
    assert client.get("/results/export/leval/nobody").status_code == 404
    assert client.get("/results?view=sideways").status_code == 400
    assert client.get("/results/correlation?profile=made-up").status_code == 400
    token = auth.token()
    assert client.post("/results/length-instruction", data={"csrf_token": token}).status_code == 302
    auth.logout()
    auth.login("annotator")
    assert client.post("/results/length-instruction", data={"csrf_token": auth.token()}).status_code == 403


def test_current_round_only_and_the_finished_view(scored_demo):
    with scored_demo.app_context():
        # ann1 begins again: round 2 covers half the answers and replaces round 1 in the analysis.
        generate_scores(["ann1"], seed=99, coverage=0.5, round_number=2)
        scores = load_current_scores(S())
        raw = raw_scores()
        assert sorted((r["annotator"], r["system"], int(r["question_id"]), r["score"]) for r in scores.records) == sorted(raw)
        progress = {p.name: p for p in scores.progress}
        assert progress["ann1"].round_number == 2 and not progress["ann1"].finished
        assert progress["ann2"].finished and progress["ann2"].scored == progress["ann2"].total == 40
        assert scores.finished_annotators == ["ann2"]
        finished = analyse(S(), "finished", win_rates={})
        assert finished["annotators"] == ["ann2"] and finished["n_scores"] == 40
        everyone = analyse(S(), "all", win_rates={})
        assert everyone["n_scores"] == len(raw)


def test_human_summary_matches_numpy(scored_demo):
    with scored_demo.app_context():
        data = analyse(S(), "all", win_rates={})
        rows = raw_scores()
        means = raw_system_means(rows)
        for summary in data["systems"]:
            values = [value for _, system, _, value in rows if system == summary["system"]]
            assert summary["mean"] == pytest.approx(means[summary["system"]])
            assert summary["n_scores"] == len(values)
            assert [summary["distribution"][k] for k in range(1, 6)] == [values.count(k) for k in range(1, 6)]
            assert summary["ci_low"] <= summary["mean"] <= summary["ci_high"]
        by_task = {(row["system"], row["group"]): row["mean"] for row in data["breakdowns"]["task"]}
        tasks = dict(db.session.execute(select(Question.id, Document.task).join(Document)).all())
        for (system, task), mean in by_task.items():
            values = [v for _, s, q, v in rows if s == system and tasks[q] == task]
            assert mean == pytest.approx(np.mean(values))


def test_alpha_and_pairs_match_the_packages_with_missing_values(scored_demo):
    with scored_demo.app_context():
        data = analyse(S(), "all", win_rates={})
        rows = raw_scores()
        annotators = sorted({a for a, *_ in rows})
        items = sorted({(s, q) for _, s, q, _ in rows})
        matrix = np.full((len(annotators), len(items)), np.nan)
        for annotator, system, question, value in rows:
            matrix[annotators.index(annotator), items.index((system, question))] = value
        assert np.isnan(matrix).any()  # ann3 left answers unscored
        expected = krippendorff.alpha(reliability_data=matrix, value_domain=[1, 2, 3, 4, 5],
                                      level_of_measurement="ordinal")
        overall = data["agreement"]["alpha"][0]
        assert overall["scope"] == "overall" and overall["alpha"] == pytest.approx(expected)
        assert overall["ci_low"] < overall["alpha"] < overall["ci_high"]
        assert data["agreement"]["items_scored_by_two_or_more"] == int((np.isfinite(matrix).sum(0) >= 2).sum())
        for row in data["agreement"]["alpha"][1:]:
            columns = [i for i, (system, _) in enumerate(items) if system == row["scope"]]
            sub = krippendorff.alpha(reliability_data=matrix[:, columns], value_domain=[1, 2, 3, 4, 5],
                                     level_of_measurement="ordinal")
            assert row["alpha"] == pytest.approx(sub)
        for pair in data["agreement"]["pairs"]:
            a, b = annotators.index(pair["annotator_a"]), annotators.index(pair["annotator_b"])
            both = np.isfinite(matrix[a]) & np.isfinite(matrix[b])
            x, y = matrix[a, both], matrix[b, both]
            result = stats.kendalltau(x, y, variant="b")
            assert pair["n_common"] == both.sum()
            assert pair["tau"] == pytest.approx(result.statistic) and pair["p_value"] == pytest.approx(result.pvalue)
            assert pair["exact"] == pytest.approx(np.mean(x == y))
            assert pair["within_one"] == pytest.approx(np.mean(np.abs(x - y) <= 1))


def test_tau_matches_scipy_with_ties_on_seven_systems(app, tmp_path, client, auth):
    # Two pairs of systems share a true quality, so without noise their human means tie exactly.
    quality = {"s1": 1, "s2": 2, "s3": 2, "s4": 3, "s5": 4, "s6": 4, "s7": 5}
    seven_systems(app, tmp_path, {k: float(v) for k, v in quality.items()}, noise=0.0, coverage=0.5)
    with app.app_context():
        generate_metric_results(seed=5, metrics=("f1", "rougeL"))
        # Tie two systems under F1 as well: every answer of s4 and s5 gets the same value.
        db.session.execute(update(MetricResult).where(MetricResult.metric == "f1", MetricResult.system_id.in_(
            select(System.id).where(System.name.in_(["s4", "s5"])))).values(value=40.0))
        db.session.commit()
        data = analyse(S(), "all", "official", win_rates={})
        human = raw_system_means(raw_scores())
        assert human["s2"] == human["s3"] and human["s5"] == human["s6"]
        systems = sorted(human)
        f1 = metric_means(S(), "official")["f1"]
        assert f1["s4"] == f1["s5"] == 40.0
        for row in data["correlations"]:
            values = {"F1": f1, "ROUGE-L": metric_means(S(), "official")["rougeL"], "−|ΔL| (words)": length_deltas(S())}[row["metric"]]
            expected = stats.kendalltau([human[s] for s in systems], [values[s] for s in systems], variant="b")
            assert row["n"] == 7
            assert row["tau"] == pytest.approx(expected.statistic)
            assert row["p_value"] == pytest.approx(expected.pvalue)
            assert any("not significant" in w for w in row["warnings"]) == (expected.pvalue > 0.05)
            assert not any("fewer than 7" in w for w in row["warnings"])
        assert data["significance_threshold_tau"] == pytest.approx(15 / 21)
    auth.login("researcher")
    page = client.get("/results/correlation").get_data(as_text=True)
    assert "0.714" in page and 'id="correlations"' in page


def test_metric_means_per_profile_and_length(scored_demo, client, auth):
    with scored_demo.app_context():
        for profile in ("official", "fixed"):
            means = metric_means(S(), profile)
            raw = db.session.execute(
                select(System.name, MetricResult.value).join(System, System.id == MetricResult.system_id)
                .where(MetricResult.profile == profile, MetricResult.metric == "rougeL")
            ).all()
            for system in means["rougeL"]:
                assert means["rougeL"][system] == pytest.approx(np.mean([v for s, v in raw if s == system]))
        answers = db.session.execute(
            select(System.name, Prediction.text, Question.reference).join(System).join(Question).join(Document)
            .where(Document.collection == HUMAN_EVAL)
        ).all()
        deltas = length_deltas(S())
        for system in deltas:
            mine = [(len(p.split()), len(r.split())) for s, p, r in answers if s == system]
            assert deltas[system] == pytest.approx(-abs(np.mean([p for p, _ in mine]) - np.mean([r for _, r in mine])))
        official, fixed = analyse(S(), "all", "official", win_rates={}), analyse(S(), "all", "fixed", win_rates={})
        assert official["correlations"][0]["metric"] == "F1"
        assert official["metric_columns"][0]["values"] != fixed["metric_columns"][0]["values"]
    auth.login("researcher")
    page = client.get("/results/correlation?profile=fixed").get_data(as_text=True)
    assert 'data-profile="fixed"' in page and "fixed (quirks corrected)" in page
    assert "fewer than 7" in page  # four demo systems: the warning is visible


def test_judge_win_rates_as_a_dict_and_from_a_judge_run(scored_demo):
    with scored_demo.app_context():
        # The systems humans scored (the demo's LV-Eval models have no human scores).
        names = sorted(raw_system_means(raw_scores()))
        rates = {name: [{"judge_model": "gpt-4", "prompt_version": 1, "win_rate": 10.0 * i}] for i, name in enumerate(names)}
        data = analyse(S(), "all", win_rates=rates)
        row = next(r for r in data["correlations"] if r["metric"].startswith("Judge gpt-4"))
        human = raw_system_means(raw_scores())
        expected = stats.kendalltau([human[n] for n in names], [10.0 * i for i in range(len(names))], variant="b")
        assert row["tau"] == pytest.approx(expected.statistic) and row["n"] == len(names)

        # A real judge run against the stub server: the system wins when shown first (order AB) and ties
        # when shown second (BA) on every question, but loses the AB order of the first question.
        questions = db.session.scalars(
            select(Question.id).join(Document).where(Document.collection == HUMAN_EVAL).order_by(Question.id)).all()
        terse = dict(db.session.execute(select(Prediction.text, Prediction.question_id).join(System)
                                        .where(System.name == "terse-13b")).all())

        def judge(body):
            _reference, answer_a, _answer_b = answers_in(body)
            if answer_a not in terse:
                return "Equally good. [[C]]"
            return "Worse. [[B]]" if terse[answer_a] == questions[0] else "Better. [[A]]"

        base = current_prompt()
        prompt = create_version(base, system_text=base.system_text + " Be brief.", user_template=base.user_template)
        db.session.commit()
        with StubOpenAIServer(policy=judge) as stub:
            save_settings(base_url=stub.base_url, api_key="sk-results-test", max_retries=0, timeout_s=5.0)
            run = prepare_run(RunSpec(system="terse-13b", baseline="shaky-3b", judge_model="gpt-4", prompt_id=prompt.id))
            summary = execute(run, concurrency=2, budget_usd=None)
            record_finished_run(run, summary, concurrency=2, budget_usd=None)
        stored = load_win_rates()
        entry = stored["terse-13b"][0]
        n = len(questions)
        assert entry["win_rate"] == pytest.approx(100 * ((n - 1) + 0.5 * n) / (2 * n))
        # FastChat: each pair's two orders disagree (win or loss against tie), so every pair is a tie.
        assert entry["win_rate_fastchat"] == pytest.approx(50.0)
        assert entry["baseline"] == "shaky-3b" and entry["prompt_version"] == 2


def test_identical_ratings_give_a_reason_not_a_number(app, client, auth):
    with app.app_context():
        demo.load_demo()
        generate_scores(["a1", "a2", "a3"], seed=1, noise=0.0, quality=defaultdict(lambda: 3.0))
        data = analyse(S(), "all", win_rates={})
        assert all(row["alpha"] is None and row["reason"] == IDENTICAL_RATINGS for row in data["agreement"]["alpha"])
        assert all(pair["tau"] is None and pair["exact"] == 1.0 for pair in data["agreement"]["pairs"])
    auth.login("researcher")
    page = client.get("/results/agreement").get_data(as_text=True)
    assert "all ratings identical" in page and "divides by it" in page


def test_length_instruction_flags_comparison_and_prompts(scored_demo, client, auth):
    auth.login("researcher")
    page = client.get("/results/correlation").get_data(as_text=True)
    assert "No system is flagged" in page
    with scored_demo.app_context():
        ids = dict(db.session.execute(select(System.name, System.id)).all())
    response = client.post("/results/length-instruction", data={
        "csrf_token": auth.token(), "length_instruction": [ids["terse-13b"], ids["balanced-34b"]]})
    assert response.status_code == 302
    with scored_demo.app_context():
        assert set(db.session.scalars(select(System.name).where(System.length_instruction.is_(True)))) == {
            "terse-13b", "balanced-34b"}
        data = analyse(S(), "all", win_rates={})
        row = data["length_instruction"][0]
        assert row["plain"]["systems"] == ["shaky-3b", "verbose-7b"]
        assert row["length_instructed"]["systems"] == ["balanced-34b", "terse-13b"]
    page = client.get("/results/correlation").get_data(as_text=True)
    assert "Without length instruction" in page and 'id="chart-length-instruction"' in page
    assert client.get("/results").get_data(as_text=True).count(">LIE</span>") == 2
    prompts = [json.loads(line) for line in client.get("/results/length-instruction/prompts.jsonl").get_data(as_text=True).splitlines()]
    assert len(prompts) == 10
    for row in prompts:
        n = len(row["gt"].split())
        assert row["word_target"] == n and row["prompt"] == f"{row['query'].rstrip()} We need a {n}-word answer."
        assert row["evaluation"] == "human" and row["input"]


def test_untrusted_names_and_text_are_escaped(scored_demo, client, auth):
    evil = '<img src=x onerror="alert(1)">'
    with scored_demo.app_context():
        db.session.execute(update(System).where(System.name == "shaky-3b").values(name=evil))
        db.session.execute(update(Question).where(Question.position == 0).values(instruction="<script>boom()</script>?"))
        db.session.commit()
    auth.login("researcher")
    for url in ("/results", "/results/correlation", "/results/agreement", "/results/disagreements",
                "/results/length-instruction"):
        page = client.get(url).get_data(as_text=True)
        assert "<img src=x" not in page and "<script>boom" not in page, url
    page = client.get("/results/disagreements?metric=length").get_data(as_text=True)
    assert "&lt;script&gt;boom()&lt;/script&gt;?" in page and "&lt;img src=x onerror=" in page


def test_disagreements_rank_answers_by_rank_gap(scored_demo, client, auth):
    with scored_demo.app_context():
        rows = disagreements(S(), "rougeL", "all", "official", top_k=None)
        assert len(rows) == 10 and rows == sorted(rows, key=lambda r: -r["gap"])
        top = rows[0]
        assert set(top["metric_values"]) == set(top["human_means"]) == {"balanced-34b", "shaky-3b", "terse-13b", "verbose-7b"}
        assert top["question"] and top["task"] in ("meeting_summ", "scientific_qa")
    auth.login("researcher")
    page = client.get("/results/disagreements?metric=rougeL").get_data(as_text=True)
    assert "Rank by humans" in page and 'aria-current="true">ROUGE-L' in page
    assert client.get("/results/disagreements?metric=nonsense").status_code == 400


def test_pages_render_before_any_score(app, client, auth):
    with app.app_context():
        demo.load_demo()
    auth.login("researcher")
    for url in PAGES[:6]:
        assert client.get(url).status_code == 200, url
    assert "No scores yet" in client.get("/results").get_data(as_text=True)
    assert "No annotator has scored every answer" in client.get("/results?view=finished").get_data(as_text=True)
    assert "No question has both human scores" in client.get("/results/disagreements").get_data(as_text=True)
    assert "Nothing to correlate yet" in client.get("/results/correlation").get_data(as_text=True)


def test_cached_analyses_follow_the_data(scored_demo, client, auth):
    auth.login("researcher")
    with scored_demo.app_context():
        before = analyse(S(), "all")["n_scores"]
    assert f"({before} scores from 3 annotators" in client.get("/results").get_data(as_text=True)
    with scored_demo.app_context():
        generate_scores(["ann4"], seed=5, coverage=0.5)
        after = analyse(S(), "all")["n_scores"]
        assert after > before
    page = client.get("/results").get_data(as_text=True)
    assert f"({after} scores from 4 annotators" in page
    with scored_demo.app_context():
        db.session.execute(update(MetricResult).where(MetricResult.metric == "f1").values(value=MetricResult.value + 1))
        db.session.commit()
        shifted = metric_means(S(), "official")["f1"]
    page = client.get("/results/correlation").get_data(as_text=True)
    assert f"({shifted['verbose-7b']:.2f})" in page


def test_cached_pages_follow_in_place_judgment_updates_and_settings(scored_demo, client, auth):
    """A resumed judge run turns error rows into verdicts in place; the cache must notice, as it must a setting."""
    from app.models import LLMJudgment
    from app.services.cache import data_fingerprint

    with scored_demo.app_context():
        first_question = db.session.scalars(
            select(Question.id).join(Document).where(Document.collection == HUMAN_EVAL).order_by(Question.id)).first()
        terse = dict(db.session.execute(select(Prediction.text, Prediction.question_id).join(System)
                                        .where(System.name == "terse-13b")).all())

        def judge(body):  # no verdict on the first question: those calls end as error rows
            _reference, answer_a, answer_b = answers_in(body)
            if first_question in (terse.get(answer_a), terse.get(answer_b)):
                return "I cannot decide."
            return "Better. [[A]]" if answer_a in terse else "Worse. [[B]]"

        with StubOpenAIServer(policy=judge) as stub:
            save_settings(base_url=stub.base_url, api_key="sk-cache-test", max_retries=0, timeout_s=5.0)
            run = prepare_run(RunSpec(system="terse-13b", baseline="shaky-3b", judge_model="gpt-4",
                                      prompt_id=current_prompt().id))
            summary = execute(run, concurrency=2, budget_usd=None)
            record_finished_run(run, summary, concurrency=2, budget_usd=None)
        assert db.session.scalar(select(func.count()).select_from(LLMJudgment).where(LLMJudgment.verdict.is_(None))) == 2
        before = load_win_rates()["terse-13b"][0]["win_rate"]
    auth.login("researcher")
    assert f"({before:.2f})" in client.get("/results/correlation").get_data(as_text=True)
    with scored_demo.app_context():  # what a resumed run does: the same rows, now with a verdict
        db.session.execute(update(LLMJudgment).where(LLMJudgment.verdict.is_(None))
                           .values(verdict="B", error=None, raw_reply="Worse. [[B]]"))
        db.session.commit()
        after = load_win_rates()["terse-13b"][0]["win_rate"]
        assert after < before
    page = client.get("/results/correlation").get_data(as_text=True)
    assert f"({after:.2f})" in page and f"({before:.2f})" not in page
    with scored_demo.app_context():
        fingerprint = data_fingerprint()
        save_settings(baseline="terse-13b")
        assert data_fingerprint() != fingerprint
        unchanged = data_fingerprint()
        db.session.commit()  # a commit that wrote nothing changes nothing
        assert data_fingerprint() == unchanged


def test_a_disagreement_links_to_the_question_with_each_answer_its_scores_and_metrics(scored_demo, client, auth):
    evil = '<img src=x onerror="alert(1)">'
    with scored_demo.app_context():
        top = disagreements(S(), "rougeL", "all", "official", top_k=1)[0]
        question_id = int(top["question_id"])
        expected = defaultdict(dict)
        for annotator, system, qid, value in db.session.execute(CURRENT_SCORES_SQL):
            if qid == question_id:
                expected[system][annotator] = value
        shaky = db.session.scalars(select(Prediction).join(System).where(
            System.name == "shaky-3b", Prediction.question_id == question_id)).one()
        rouge = db.session.scalar(select(MetricResult.value).where(
            MetricResult.prediction_id == shaky.id, MetricResult.metric == "rougeL", MetricResult.profile == "official"))
        db.session.execute(update(System).where(System.name == "verbose-7b").values(name=evil))
        db.session.commit()
        study = S()
    auth.login("researcher")
    page = client.get("/results/disagreements?metric=rougeL").get_data(as_text=True)
    url = f"/results/disagreements/questions/{question_id}?study={study}&amp;view=all&amp;profile=official&amp;metric=rougeL"
    assert f'href="{url}" data-link="question"' in page
    page = client.get(url.replace("&amp;", "&")).get_data(as_text=True)
    assert "<img src=x" not in page and "&lt;img src=x onerror=" in page
    row = page.split('<tr data-system="shaky-3b">')[1].split("</tr>")[0]
    for annotator, value in expected["shaky-3b"].items():
        assert f'data-annotator="{annotator}">{value}<' in row
    assert f'data-metric="ROUGE-L">{rouge:.2f}<' in row
    assert top["question"].replace("'", "&#39;") in page
    assert client.get(f"/results/disagreements/questions/999999?study={study}").status_code == 404
    auth.logout()
    auth.login("annotator")
    assert client.get(url.replace("&amp;", "&")).status_code == 403
