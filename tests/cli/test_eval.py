"""`python run.py eval`: L-Eval's published values through the command line, JSON shape, profiles, errors; no DB."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from app.core.metrics import METRIC_KEYS, evaluate_file
from app.services.demo import DEMO_PATH
from tests.conftest import REPO_ROOT
from tests.core.test_metrics import PUBLISHED

QUALITY = DEMO_PATH / "exam_eval" / "terse-13b" / "quality.pred.jsonl"


def run_cli(*args: str, instance) -> subprocess.CompletedProcess:
    env = {**os.environ, "LEVAL_INSTANCE": str(instance), "LEVAL_WORKERS": "0"}
    return subprocess.run([sys.executable, "run.py", *args], cwd=REPO_ROOT, env=env, capture_output=True, text=True,
                          timeout=180)


def test_published_values_through_the_command_line(shared_leval, tmp_path):
    files = [str(shared_leval / "Predictions" / f"{name}.pred.jsonl") for name, _, _ in PUBLISHED]
    result = run_cli("eval", "--json", *dict.fromkeys(files), instance=tmp_path / "fresh")
    assert result.returncode == 0, result.stderr
    by_file = {item["file"]: item for item in json.loads(result.stdout)}
    for name, metric, expected in PUBLISHED:
        item = by_file[str(shared_leval / "Predictions" / f"{name}.pred.jsonl")]
        assert item["metrics"][metric] == pytest.approx(expected, abs=0.01), (name, metric)
        system, task = name.split("/")[1:]
        assert (item["task"], item["system"], item["profile"]) == (task, system, "official")
    assert not (tmp_path / "fresh" / "leval.db").exists(), "eval must not create or need the database"


def test_json_shape_keys_and_rounding(runner, tmp_path):
    human = str(DEMO_PATH / "human_eval" / "terse-13b.pred.jsonl")
    refused = runner.invoke(args=["eval", "--json", str(QUALITY), human])
    assert refused.exit_code == 1 and "auto_eval.py refuses such a file" in refused.output
    result = runner.invoke(args=["eval", "--json", "--scope", "analysis", str(QUALITY), human])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert [list(item)[:5] for item in data] == [["file", "task", "system", "n", "metrics"]] * 2
    assert (data[0]["task"], data[0]["system"], data[0]["n"]) == ("quality", "terse-13b", 8)
    assert set(data[1]["metrics"]) == {"f1", "rouge1", "rouge2", "rougeL", "rouge_geo", "avg_words", "delta_words"}
    for item in data:
        assert set(item["metrics"]) <= set(METRIC_KEYS)
        assert all(round(v, 4) == v for v in item["metrics"].values())
        assert item["metrics"] == evaluate_file(item["file"], refuse=False)["analysis"]["metrics"]
        assert item["scope"] == "analysis"


def test_fixed_profile_and_evaluation_override(runner, tmp_path):
    rows = [{"query": "Which?", "gt": "(C) the third", "m_pred": "Based on the text, the answer is C", "evaluation": "exam"}]
    path = tmp_path / "m" / "quality.pred.jsonl"
    path.parent.mkdir()
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    official = json.loads(runner.invoke(args=["eval", "--json", str(path)]).output)[0]
    fixed = json.loads(runner.invoke(args=["eval", "--json", "--profile", "fixed", str(path)]).output)[0]
    assert official["metrics"]["exact_match"] == 0.0, "the official profile reads 'Based on the text, the answer is C' as B"
    assert fixed["metrics"]["exact_match"] == 100.0 and fixed["profile"] == "fixed"
    as_f1 = json.loads(runner.invoke(args=["eval", "--json", "--evaluation", "f1", str(path)]).output)[0]
    assert "exact_match" not in as_f1["metrics"] and "f1" in as_f1["metrics"]


def test_lveval_files_are_accepted(runner, tmp_path):
    path = tmp_path / "hotpotwikiqa_mixup_16k.jsonl"
    rows = [{"pred": "The capital is Paris.", "answers": ["Paris"], "gold_ans": "Paris", "length": 16000},
            {"pred": "No idea.", "answers": ["Berlin"], "gold_ans": "Berlin", "length": 16000}]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    data = json.loads(runner.invoke(args=["eval", "--json", str(path)]).output)[0]
    assert data["task"] == "hotpotwikiqa_mixup_16k" and data["n"] == 2
    assert data["metrics"]["keyword_f1"] == evaluate_file(path)["metrics"]["keyword_f1"]


def test_table_output_and_folders(runner):
    result = runner.invoke(args=["eval", str(DEMO_PATH / "exam_eval")])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].startswith("profile: official")
    assert lines[1].split()[:5] == ["file", "task", "system", "n", "exact_match"]
    assert len(lines) == 2 + 4 and any("terse-13b" in line and "87.5000" in line for line in lines)


def test_a_bad_file_exits_non_zero_but_reports_the_others(runner, tmp_path):
    bad = tmp_path / "broken.pred.jsonl"
    bad.write_text('{"query": "q", "gt": "g", "m_pred": "p", "evaluation": "f1"}\n{"query": \n')
    result = runner.invoke(args=["eval", "--json", str(QUALITY), str(bad)])
    assert result.exit_code == 1
    assert "line 2 is not valid JSON" in result.output
    assert runner.invoke(args=["eval", str(tmp_path / "missing.jsonl")]).exit_code == 2
