"""Generation against a stub OpenAI-compatible server: prompts received, stored system, cache, faults."""
from __future__ import annotations

import json

import pytest
from sqlalchemy import select

from app.extensions import db
from app.core.generation import prompts, tokens, truncate
from app.models import Job, Prediction, System
from tests.support.openai_stub import Fault

STUB_POLICY = lambda body: "  The answer.  "  # noqa: E731 - stripped as L-Eval strips replies


@pytest.fixture(autouse=True)
def _estimate_tokens(monkeypatch):
    # Deterministic counts whatever tiktoken can load on this machine.
    monkeypatch.setenv("LEVAL_TOKENIZER", "estimate")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-generate-test-0123456789")


def generate(runner, stub, *args):
    result = runner.invoke(args=["generate", "--base-url", stub.base_url, "--model", "gpt-3.5-turbo", "--json", *args])
    assert result.exit_code == 0, result.output
    return json.loads(result.output.strip().splitlines()[-1])


def user_messages(stub):
    return [r.body["messages"] for r in stub.requests]


def test_human_eval_run_sends_leval_prompts_and_stores_a_system(demo, runner, stub):
    out = generate(runner, stub, "--questions", "human_eval", "--system", "plain-run")
    assert (out["questions"], out["answered"], out["api_calls"], out["pending"]) == (10, 10, 10, 0)
    for messages in user_messages(stub):
        assert messages[0] == {"role": "system", "content": prompts.LEVAL_SYSTEMS["open"]}
        assert messages[1]["content"].startswith("Document is as follows. ")
        assert messages[1]["content"].endswith(" Output: ")
        assert "suggested output length" not in messages[1]["content"]
    assert {r.body["temperature"] for r in stub.requests} == {0.0001}
    assert {r.body["max_tokens"] for r in stub.requests} == {512}
    with demo.app_context():
        system = db.session.scalars(select(System).where(System.name == "plain-run")).one()
        assert system.length_instruction is False
        answers = db.session.scalars(select(Prediction).where(Prediction.system_id == system.id)).all()
        assert len(answers) == 10 and {a.text for a in answers} == {"The answer."}
        assert all(a.prompt.startswith(prompts.LEVAL_SYSTEMS["open"] + "Document is as follows. {} ") for a in answers)
        metrics = db.session.get(Job, out["metrics_job"])
        assert metrics.kind == "metrics" and metrics.params["system_id"] == system.id


def test_length_instruction_uses_the_reference_words_and_flags_the_system(demo, runner, stub):
    out = generate(runner, stub, "--questions", "human_eval", "--length-instruction")
    assert out["system"] == "gpt-3.5-turbo-16k-len"
    with demo.app_context():
        from app.services.question_sets import select_questions

        questions = select_questions("human_eval")
        system = db.session.scalars(select(System).where(System.name == out["system"])).one()
        assert system.length_instruction is True
    sent = [r.body["messages"][1]["content"] for r in stub.requests]  # concurrent: any order
    for question in questions:
        n = len(question.reference.split())
        ending = f" Instruction: {question.instruction} The suggested output length is around {n} words. Output: "
        assert sum(content.endswith(ending) for content in sent) == 1, question.instruction
    assert out["manifest"]["length_instruction"] is True


def test_a_small_context_truncates_as_leval_does_and_records_it(demo, runner, stub):
    out = generate(runner, stub, "--questions", "human_eval", "--context-tokens", "2000", "--system", "small")
    cut = out["manifest"]["truncated_documents"]
    assert out["manifest"]["context"]["documents_cut"] == 2 and len(cut) == 2
    with demo.app_context():
        from app.services.question_sets import documents_for, select_questions

        questions = select_questions("human_eval")
        documents = documents_for(questions)
    first = documents[questions[0].document_id].text
    expected = truncate.truncate_leval(first, 2000 - 512, tokens.estimate_tokens).text
    assert len(expected) < len(first)
    assert any(r.body["messages"][1]["content"].startswith(f"Document is as follows. {expected} Instruction: ")
               for r in stub.requests)
    record = next(c for c in cut if c["document"] == questions[0].document_id)
    assert record["tokens_after"] <= 1488 < record["tokens_before"] and record["kept"] == "start"
    assert record["chars_cut"] == len(first) - len(expected)


def test_exam_task_gets_the_exam_hint(demo, runner, stub):
    out = generate(runner, stub, "--questions", "task:quality", "--system", "quality-run")
    assert out["answered"] == 8
    for messages in user_messages(stub):
        assert messages[0]["content"] == prompts.LEVAL_SYSTEMS["exam"]
        assert "Please only provide the letter corresponding to the answer (like A or B)" in messages[0]["content"]
        assert messages[1]["content"].endswith(
            "\nPlease directly give answer without any additional output or explanation\n Answer: ")
    assert out["pred_file"] == "quality.pred.jsonl"


def test_a_rerun_makes_no_call_and_a_new_system_reuses_the_cache(demo, runner, stub):
    first = generate(runner, stub, "--questions", "human_eval", "--system", "first")
    calls = stub.calls
    again = generate(runner, stub, "--questions", "human_eval", "--system", "first")
    other = generate(runner, stub, "--questions", "human_eval", "--system", "second", "--concurrency", "2")
    assert stub.calls == calls == first["api_calls"] == 10
    assert (again["api_calls"], again["run_id"]) == (0, first["run_id"])
    assert (other["api_calls"], other["cached"], other["answered"]) == (0, 10, 10)


def test_a_changed_setting_is_a_different_call(demo, runner, stub):
    generate(runner, stub, "--questions", "human_eval", "--system", "t1")
    generate(runner, stub, "--questions", "human_eval", "--system", "t2", "--temperature", "0.5")
    assert stub.calls == 20


def test_the_system_name_of_other_answers_is_refused(demo, runner, stub):
    result = runner.invoke(args=["generate", "--base-url", stub.base_url, "--model", "m", "--system", "terse-13b"])
    assert result.exit_code != 0 and "terse-13b" in result.output and "already exists" in result.output
    assert stub.calls == 0


def test_retry_after_is_honoured(demo, runner, stub):
    stub.add_faults(Fault.rate_limit(retry_after="1"))
    out = generate(runner, stub, "--questions", "task:quality", "--concurrency", "1", "--system", "slow")
    assert out["answered"] == 8 and out["errors"] == 0
    times = [r.received_at for r in stub.requests]
    assert stub.requests[0].status == 429 and times[1] - times[0] >= 0.9


def test_a_budget_stops_launching_calls(demo, runner, stub):
    out = generate(runner, stub, "--questions", "human_eval", "--concurrency", "1", "--budget-usd", "0.000001",
                   "--system", "thrifty")
    assert out["stopped"] == "budget" and out["api_calls"] == 1 and out["pending"] == 9


def test_dry_run_estimates_and_calls_nothing(demo, runner, stub):
    out = generate(runner, stub, "--questions", "human_eval", "--dry-run")
    assert (out["calls"], out["questions"], out["max_completion_tokens"]) == (10, 10, 5120)
    assert out["prompt_tokens"] > 10_000 and stub.calls == 0
    generate(runner, stub, "--questions", "human_eval", "--system", "paid")
    assert generate(runner, stub, "--questions", "human_eval", "--dry-run")["calls"] == 0


def test_failed_calls_leave_questions_for_a_resume(demo, runner, stub):
    stub.add_faults(*[Fault.server_error(status=500, retry_after_ms=1)] * 6)  # more than the client retries
    args = ["--questions", "task:quality", "--concurrency", "1", "--system", "flaky"]
    result = runner.invoke(args=["generate", "--base-url", stub.base_url, "--model", "gpt-3.5-turbo", *args])
    assert result.exit_code != 0 and "run again to retry" in result.output
    out = generate(runner, stub, *args)
    assert out["answered"] == 8 and out["api_calls"] == 1  # only the failed question is asked again


def test_sci_fi_asks_the_real_world_follow_up(app, runner, stub, tmp_path):
    line = {"instructions": ["Is the sky green based on the world described in the document."], "outputs": ["True"],
            "input": "In this story the sky is green.", "source": "sci_fi", "evaluation": "exam"}
    path = tmp_path / "sci_fi.jsonl"
    path.write_text(json.dumps(line) + "\n", encoding="utf-8")
    assert runner.invoke(args=["import-leval", str(path)]).exit_code == 0
    out = generate(runner, stub, "--questions", "task:sci_fi", "--system", "fiction")
    assert out["api_calls"] == 2
    follow = [r.body["messages"] for r in stub.requests if len(r.body["messages"]) == 3][0]
    assert follow[2]["content"] == ("Is the sky green based on the real-world knowledge and facts up until your last "
                                    "training\nPlease directly give answer without any additional output or explanation \nAnswer:")
    with app.app_context():
        text = db.session.scalars(select(Prediction.text).join(System).where(System.name == "fiction")).one()
    assert text == "The answer. [fact: The answer.]"
