"""Question sets: L-Eval's subsets as build_key_data_pairs selects them, and the `.pred.jsonl` download."""
from __future__ import annotations

import json
import random


from app.services.question_sets import available_sets, select_questions
from tests.support import leval_prompt_reference as ref
from tests.support.shared import require_shared


def _write_tasks(folder, files: dict[str, list[dict]]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for task, rows in files.items():
        (folder / f"{task}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def _synthetic(rng: random.Random) -> dict[str, list[dict]]:
    files = {}
    for task in ("tv_show_summ", "financial_qa", "review_summ", "narrative_qa"):  # not in L-Eval's order
        rows = []
        for line in range(4):
            k = rng.randint(1, 3)
            rows.append({"instructions": [f"{task} line {line} q{i}?" for i in range(k)],
                         "outputs": [f"answer {i} of {task}" for i in range(k)],
                         "input": f"document {task} {line} " + "text " * rng.randint(5, 50),
                         "source": task, "evaluation": rng.choice(["human", "LLM", "f1", "rouge"])})
        files[task] = rows
    return files


def _expected(metric: str, files: dict[str, list[dict]]) -> list[tuple[str, str]]:
    return [(inst, out) for d in ref.subset_rows(metric, files) for inst, out in zip(d["instructions"], d["outputs"])]


def test_subsets_follow_build_key_data_pairs(app, runner, tmp_path):
    files = _synthetic(random.Random(7))
    _write_tasks(tmp_path / "Open-ended-tasks", files)
    assert runner.invoke(args=["import-leval", str(tmp_path / "Open-ended-tasks")]).exit_code == 0
    with app.app_context():
        for name, metric in (("gpt4", "llm_gpt4_eval"), ("gpt35", "llm_turbo_eval")):
            got = [(q.instruction, q.reference) for q in select_questions(name)]
            assert got == _expected(metric, files), name
        ngram = [(q.instruction, q.reference) for q in select_questions("auto:financial_qa")]
        assert ngram == [(i, o) for d in ref.task_rows("ngram_eval", "financial_qa", files)
                         for i, o in zip(d["instructions"], d["outputs"])]
        every = [(q.instruction, q.reference) for q in select_questions("task:financial_qa")]
        assert every == [(i, o) for d in ref.task_rows("ngram_eval", "financial_qa", files, task_name_given=True)
                         for i, o in zip(d["instructions"], d["outputs"])]
        sets = {s["name"]: s for s in available_sets()}
        assert sets["gpt4"]["expected"] == 96 and sets["gpt4"]["count"] == len(_expected("llm_gpt4_eval", files))


def test_the_published_data_identifies_its_subsets(app, runner):
    shared = require_shared()
    assert runner.invoke(args=["import-leval", str(shared / "LEval-data" / "Open-ended-tasks")]).exit_code == 0
    files = {p.stem: [json.loads(line) for line in p.read_text(encoding="utf-8").splitlines() if line.strip()]
             for p in (shared / "LEval-data" / "Open-ended-tasks").glob("*.jsonl")}
    with app.app_context():
        gpt4 = [(q.instruction, q.reference) for q in select_questions("gpt4")]
        gpt35 = [(q.instruction, q.reference) for q in select_questions("gpt35")]
    assert gpt4 == _expected("llm_gpt4_eval", files)
    assert gpt35 == _expected("llm_turbo_eval", files)
    # 96 and 181 with narrative_qa (10 human + 22 LLM questions); fewer when a task file is missing.
    missing_narrative = "narrative_qa" not in files
    assert len(gpt4) == (74 if missing_narrative else 96)
    assert len(gpt35) == (149 if missing_narrative else 181)


def test_the_download_has_leval_keys_in_order(demo, runner, monkeypatch, stub):
    monkeypatch.setenv("LEVAL_TOKENIZER", "estimate")
    result = runner.invoke(args=["generate", "--base-url", stub.base_url, "--model", "my-model", "--system",
                                 "my-model", "--json"])
    assert result.exit_code == 0, result.output
    from app.models import GenerationRun
    from app.extensions import db
    from app.services.generation.store import pred_file

    with demo.app_context():
        run = db.session.get(GenerationRun, json.loads(result.output.splitlines()[-1])["run_id"])
        name, text, rows, missing = pred_file(run)
        order = [(q.instruction, q.reference) for q in select_questions("human_eval")]
    assert (name, rows, missing) == ("my-model.pred.jsonl", 10, 0)
    lines = [json.loads(line) for line in text.splitlines()]
    assert [list(r) for r in lines] == [["query", "gt", "prompt", "my-model_pred", "evaluation"]] * 10
    assert [(r["query"], r["gt"]) for r in lines] == order
    assert {r["evaluation"] for r in lines} == {"human"}
    assert text == "".join(json.dumps(r) + "\n" for r in lines)
