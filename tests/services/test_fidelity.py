"""Fidelity to L-Eval: the Baselines-layout builder and the llm_eval.py oracle the app is checked against."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlalchemy import func, select

from app.extensions import db
from app.core.metrics import evaluate_file, evaluate_rows
from app.core.metrics.selection import NothingCounted
from app.models import MetricAggregate, MetricResult, System
from app.services.importers import import_path
from app.services.metrics import score_system
from tests.support import leval_judge_reference as oracle
from tests.support import leval_reference as auto_eval
from tests.conftest import require_shared
from tests.support.baselines_layout import build_layout, instructions, read_jsonl, task_files
from tests.support.tricky_replies import TRICKY_REPLIES

VERDICT_NAMES = {"A": "A", "B": "B", "tie": "C", "error": None}


@pytest.fixture(scope="module")
def layout(tmp_path_factory):
    shared = require_shared()
    return build_layout(shared, tmp_path_factory.mktemp("baselines"))


def _write(path: Path, rows: list) -> Path:
    lines = [row if isinstance(row, str) else json.dumps(row) for row in rows]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


# --- the Baselines layout -------------------------------------------------------------------

def test_layout_holds_every_instruction_with_its_documents_evaluation(layout):
    built = layout.file("turbo-16k-0613", "financial_qa")
    assert built.counts == {"f1": 52, "LLM": 8, "human": 8}
    rows = read_jsonl(built.path)
    expected = instructions(task_files(require_shared())["financial_qa"])
    assert [(r["query"], r["gt"], r["evaluation"]) for r in rows] == expected
    assert all("turbo-16k-0613_pred" in row for row in rows)
    legal = layout.file("turbo-16k-0613", "legal_contract_qa")
    assert legal.counts == {"f1": 130, "LLM": 16, "human": 8}


def test_layout_covers_the_open_tasks_of_three_models_and_the_closed_tasks(layout):
    open_tasks = {"financial_qa", "gov_report_summ", "legal_contract_qa", "meeting_summ", "multidoc_qa",
                  "natural_question", "news_summ", "paper_assistant", "patent_summ", "review_summ",
                  "scientific_qa", "tv_show_summ"}
    for model in ("turbo-16k-0613", "llama2-13b-chat-4k", "vicuna-13b-16k-flash"):
        assert {f.task for f in layout.files if f.model == model} >= open_tasks
    assert {"coursera", "quality", "tpo", "gsm100", "topic_retrieval_longchat"} <= set(layout.tasks())


def test_closed_task_files_equal_the_published_ones(layout):
    # Closed tasks have exam rows only, so the published exam files already are in this layout.
    published = require_shared() / "Predictions" / "exam_eval" / "turbo-16k-0613" / "quality.pred.jsonl"
    assert read_jsonl(layout.file("turbo-16k-0613", "quality").path) == read_jsonl(published)


def _auto_eval(layout, built) -> dict[str, float]:
    # The reference dispatches on substrings of --pred_file: pass the path under the layout's root.
    return auto_eval.evaluate_pred_file(built.path, str(built.path.relative_to(layout.root)))


LENGTH_KEYS = {"avg_words", "delta_words"}  # the app's own length columns, beside auto_eval.py's keys


# --- official aggregation = auto_eval.py on the Baselines layout --------------------------------

def test_eval_equals_auto_eval_on_every_baselines_layout_file(layout):
    assert len(layout.files) >= 50
    for built in layout.files:
        expected = _auto_eval(layout, built)
        result = evaluate_file(built.path)
        counted = sum(n for evaluation, n in built.counts.items() if evaluation in ("f1", "rouge", "exam"))
        assert result["n"] == counted, built.path
        assert {k: v for k, v in result["metrics"].items() if k not in LENGTH_KEYS} == expected, built.path


def test_eval_reports_the_issue_example_and_keeps_every_row_for_the_analysis(layout):
    result = evaluate_file(layout.file("turbo-16k-0613", "legal_contract_qa").path)
    assert (result["n"], result["metrics"]["f1"], result["evaluation"]) == (130, 24.8686, "f1")
    assert not {"rouge1", "rouge2", "rougeL", "rouge_geo"} & set(result["metrics"])  # no ROUGE on an F1 task
    assert result["analysis"]["n"] == 154 and "rougeL" in result["analysis"]["metrics"]


def test_stored_aggregates_equal_auto_eval_on_every_baselines_layout_file(app, layout):
    with app.app_context():
        assert not import_path(require_shared() / "LEval-data").failed
        report = import_path(layout.root)
        assert not report.failed and report.unmatched == 0
        for system_id in db.session.scalars(select(System.id)):
            score_system(system_id, profiles=("official", "fixed"))
        for built in layout.files:
            system_id = db.session.scalar(select(System.id).where(System.name == built.model))
            stored = {a.metric: (a.value, a.n) for a in db.session.scalars(select(MetricAggregate).where(
                MetricAggregate.system_id == system_id, MetricAggregate.task == built.task,
                MetricAggregate.profile == "official"))}
            expected = _auto_eval(layout, built)
            assert {k: v for k, (v, _) in stored.items() if k not in LENGTH_KEYS} == expected, built.path
            counted = sum(n for evaluation, n in built.counts.items() if evaluation in ("f1", "rouge", "exam"))
            assert {n for k, (_, n) in stored.items() if k in expected and k != "rouge_geo"} == {counted}
        # LLM and human rows keep their F1 and ROUGE, labelled analysis, outside every task score.
        turbo = db.session.scalar(select(System.id).where(System.name == "turbo-16k-0613"))
        scopes = dict(db.session.execute(
            select(MetricResult.scope, func.count(func.distinct(MetricResult.prediction_id)))
            .where(MetricResult.system_id == turbo, MetricResult.profile == "official", MetricResult.metric == "rougeL")
            .group_by(MetricResult.scope)).all())
        open_llm_human = sum(n for b in layout.files if b.model == "turbo-16k-0613"
                             for e, n in b.counts.items() if e in ("LLM", "human"))
        assert scopes["analysis"] == open_llm_human


def _rows(evaluations: list[str]) -> list[dict]:
    return [{"query": f"q{i}", "gt": "the cat sat on the mat", "m_pred": "a cat sat" if i % 2 else "the mat",
             "evaluation": evaluation} for i, evaluation in enumerate(evaluations)]


def test_evaluation_spelling_is_exact_in_official_and_loose_in_fixed(tmp_path):
    rows = _rows(["f1", "F1", " f1", "LLM", "human", "f1"])
    path = _write(tmp_path / "m" / "narrative_qa.pred.jsonl", rows)
    official = evaluate_file(path)
    assert (official["n"], official["skipped"]) == (2, 4)
    assert {k: v for k, v in official["metrics"].items() if k not in LENGTH_KEYS} == \
        auto_eval.evaluate_pred_file(path, "m/narrative_qa.pred.jsonl")
    fixed = evaluate_file(path, profile="fixed")
    assert fixed["n"] == 4 and official["analysis"]["n"] == 6
    only_upper = _write(tmp_path / "m" / "natural_question.pred.jsonl", _rows(["F1", "LLM"]))
    with pytest.raises(NothingCounted, match="1 'F1', 1 'LLM'"):
        evaluate_file(only_upper)
    assert evaluate_file(only_upper, profile="fixed")["n"] == 1
    with pytest.raises(AssertionError):  # the reference refuses it too
        auto_eval.evaluate_pred_file(only_upper, "m/natural_question.pred.jsonl")


def test_where_auto_eval_crashes_the_quirks_list_what_both_profiles_do(tmp_path):
    # prediction_key_per_row: auto_eval.py reads row 0's key and crashes on a row without it.
    keys = [{"query": "q0", "gt": "the cat", "a_pred": "the cat", "evaluation": "f1"},
            {"query": "q1", "gt": "a dog", "b_pred": "a dog", "evaluation": "f1"}]
    path = _write(tmp_path / "m" / "financial_qa.pred.jsonl", keys)
    with pytest.raises(KeyError):
        auto_eval.evaluate_pred_file(path, "m/financial_qa.pred.jsonl")
    for profile in ("official", "fixed"):
        assert evaluate_file(path, profile=profile)["metrics"]["f1"] == 100.0  # each row by its own key
    no_key = _write(tmp_path / "m" / "natural_question.pred.jsonl",
                    [keys[0], {"query": "q1", "gt": "a dog", "answer": "a dog", "evaluation": "f1"}])
    with pytest.raises(ValueError, match="row 1"):
        evaluate_file(no_key)
    # non_string_texts: a list gt is several references (the best counts); a number is its text.
    texts = [{"query": "q0", "gt": ["the cat", "a dog"], "a_pred": "a dog", "evaluation": "f1"},
             {"query": "q1", "gt": "5", "a_pred": 5, "evaluation": "f1"}]
    path = _write(tmp_path / "m" / "multidoc_qa.pred.jsonl", texts)
    with pytest.raises((AttributeError, TypeError)):
        auto_eval.evaluate_pred_file(path, "m/multidoc_qa.pred.jsonl")
    for profile in ("official", "fixed"):
        assert evaluate_file(path, profile=profile)["metrics"]["f1"] == 100.0


@pytest.mark.parametrize("evaluations", [["f1", "rouge", "f1", "rouge"], ["rouge", "rouge", "f1"]])
def test_a_mixed_file_is_scored_with_its_last_counted_rows_metric(tmp_path, evaluations):
    path = _write(tmp_path / "m" / "multidoc_qa.pred.jsonl", _rows(evaluations + ["LLM"]))
    expected = auto_eval.evaluate_pred_file(path, "m/multidoc_qa.pred.jsonl")
    result = evaluate_rows(_rows(evaluations + ["LLM"]), task="multidoc_qa")
    assert {k: v for k, v in result["metrics"].items() if k not in LENGTH_KEYS} == expected
    assert result["evaluation"] == evaluations[-1]
    fixed = evaluate_rows(_rows(evaluations), task="multidoc_qa", profile="fixed")["metrics"]
    assert {"f1", "rougeL"} <= set(fixed)  # each row by its own evaluation


def test_stored_mixed_and_uncounted_tasks(app, tmp_path):
    documents = tmp_path / "data" / "LEval-data" / "Open-ended-tasks"
    documents.mkdir(parents=True)
    for task in ("multidoc_qa", "news_summ"):
        docs = [{"instructions": ["q0", "q1"], "outputs": ["the cat sat on the mat"] * 2, "input": "A text.",
                 "source": task, "evaluation": "f1"},
                {"instructions": ["q2"], "outputs": ["the cat sat on the mat"], "input": "Another text.",
                 "source": task, "evaluation": "rouge" if task == "multidoc_qa" else "LLM"}]
        (documents / f"{task}.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs), encoding="utf-8")
    rows = _rows(["f1", "f1", "rouge"])
    mixed = _write(tmp_path / "preds" / "m" / "multidoc_qa.pred.jsonl", rows)
    _write(tmp_path / "preds" / "m" / "news_summ.pred.jsonl", [{**r, "evaluation": "LLM"} for r in rows[2:]])
    expected = auto_eval.evaluate_pred_file(mixed, "m/multidoc_qa.pred.jsonl")
    with app.app_context():
        assert not import_path(documents.parent).failed
        assert not import_path(tmp_path / "preds").failed
        system_id = db.session.scalar(select(System.id).where(System.name == "m"))
        summary = score_system(system_id, profiles=("official",))
        stored = {(a.task, a.metric): a.value for a in db.session.scalars(select(MetricAggregate).where(
            MetricAggregate.system_id == system_id, MetricAggregate.profile == "official"))}
    assert {m: v for (t, m), v in stored.items() if t == "multidoc_qa" and m not in LENGTH_KEYS} == expected
    assert not any(t == "news_summ" for t, _ in stored)  # nothing counts there: no task score, as upstream refuses
    assert summary["not_counted"] == {"official": 1}


# --- the llm_eval.py oracle: reading ---------------------------------------------------------

def test_oracle_reads_like_llm_eval(tmp_path):
    path = _write(tmp_path / "a.pred.jsonl", [
        {"query": "q1", "gt": "g1", "m_pred": "x", "evaluation": "LLM"},
        "{not json",
        {"query": "q2", "gt": "g2", "m_pred": "y"},  # no evaluation: dropped silently
        {"query": "q3", "gt": "g3", "m_pred": "z", "evaluation": "F1"},  # not "f1": no filtering
        [1, 2],
    ])
    assert [r["query"] for r in oracle.read_judge_rows(path)] == ["q1", "q3"]
    _write(path, [{"query": "q1", "gt": "g1", "m_pred": "x", "evaluation": "LLM"},
                  {"query": "q2", "gt": "g2", "m_pred": "y", "evaluation": "rouge"},
                  {"query": "q3", "gt": "g3", "m_pred": "z", "evaluation": "human"}])
    assert [r["query"] for r in oracle.read_judge_rows(path)] == ["q2"]


def test_oracle_pairs_by_raw_concatenation(tmp_path):
    pred = _write(tmp_path / "p.jsonl", [
        {"query": "ab", "gt": "c", "sys_pred": "S1", "evaluation": "LLM"},
        {"query": "q ", "gt": "g", "sys_pred": "S2", "evaluation": "LLM"},  # trailing space: no partner
        {"query": "dup", "gt": "g", "sys_pred": "S3", "evaluation": "LLM"},
    ])
    battle = _write(tmp_path / "b.jsonl", [
        {"query": "a", "gt": "bc", "prompt_pred": "ignored", "base_pred": "B1", "evaluation": "LLM"},
        {"query": "dup", "gt": "g", "prompt_pred": "ignored", "base_pred": "B2", "evaluation": "LLM"},
        {"query": "dup", "gt": "g", "prompt_pred": "ignored", "base_pred": "B3", "evaluation": "LLM"},
    ])
    samples, pred_key, battle_key = oracle.construct_pairs(pred, battle)
    assert (pred_key, battle_key) == ("sys_pred", "base_pred")  # the battle file's LAST _pred key
    # "ab"+"c" pairs with "a"+"bc"; the later duplicate battle row wins.
    assert [(s["sys_pred"], s["base_pred"]) for s in samples] == [("S1", "B1"), ("S3", "B3")]


def test_oracle_refuses_files_keeping_different_row_counts(tmp_path):
    pred = _write(tmp_path / "p.jsonl", [{"query": "q", "gt": "g", "s_pred": "x", "evaluation": "LLM"}])
    battle = _write(tmp_path / "b.jsonl", [{"query": "q", "gt": "g", "b_pred": "y", "evaluation": "LLM"}] * 2)
    with pytest.raises(AssertionError):
        oracle.construct_pairs(pred, battle)


# --- the oracle: verdicts and counting ----------------------------------------------------------

@pytest.mark.parametrize("tricky", TRICKY_REPLIES, ids=lambda t: t.name)
def test_tricky_replies_list_the_llm_eval_verdict(tricky):
    assert VERDICT_NAMES[oracle.leval_verdict(tricky.reply)] == tricky.leval


def test_tricky_replies_include_flips_both_ways():
    flips = [t for t in TRICKY_REPLIES if t.flips]
    assert len(flips) >= 5
    assert any(t.leval is None for t in flips) and any(t.last_token is None for t in TRICKY_REPLIES)


def test_oracle_sends_the_reference_prompt_and_counts_both_orders(tmp_path):
    pred = _write(tmp_path / "p.jsonl", [{"query": "Q{x}", "gt": "G", "sys_pred": "long answer", "evaluation": "LLM"},
                                         {"query": "Q2", "gt": "G2", "sys_pred": "s", "evaluation": "LLM"}])
    battle = _write(tmp_path / "b.jsonl", [{"query": "Q{x}", "gt": "G", "base_pred": "short", "evaluation": "LLM"},
                                           {"query": "Q2", "gt": "G2", "base_pred": "t", "evaluation": "LLM"}])
    replies = iter(["[[A]]", "[[A]]", "[[C]]", "no verdict"])
    run = oracle.run_llm_eval(pred, battle, lambda messages: next(replies))
    first = run.calls[0]
    assert first[0] == {"role": "system", "content": oracle.SYSTEM_PROMPT}
    assert first[1]["content"].startswith("[User Question]\nQ{x}\n\n[The Start of Reference Answer]\nG\n")
    assert "Assistant A's Answer]\nlong answer\n" in first[1]["content"]
    assert "Assistant A's Answer]\nshort\n" in run.calls[1][1]["content"]  # swapped
    assert run.statistics == {"tie": 1, "error": 1, "sys": 1, "base": 1}
    assert run.win_rates == {"sys": pytest.approx(0.5), "base": pytest.approx(0.5)}


def test_oracle_counts_one_name_on_both_sides_together(tmp_path):
    rows = [{"query": f"q{i}", "gt": "g", "same_pred": f"own {i}", "evaluation": "LLM"} for i in range(2)]
    pred = _write(tmp_path / "p.jsonl", rows)
    battle = _write(tmp_path / "b.jsonl", [{**r, "same_pred": f"battle {i}"} for i, r in enumerate(rows)])
    seen = []

    def judge(messages):
        seen.append(messages[1]["content"])
        return "[[A]]" if len(seen) % 2 else "[[C]]"

    run = oracle.run_llm_eval(pred, battle, judge)
    # The battle answer overwrites the prediction under the shared key: both sides are the battle's.
    assert all("own" not in text for text in seen)
    assert run.statistics == {"tie": 2, "error": 0, "same": 2}
    assert run.win_rates == {"same": pytest.approx(0.75)}
