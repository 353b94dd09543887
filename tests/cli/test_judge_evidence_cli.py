"""`run.py judge --profile evidence`: two stored systems, their documents read and each quote checked; files refused."""
from __future__ import annotations

import json

from sqlalchemy import func, select

from app.extensions import db
from app.models import LLMJudgment, Prediction, System
from app.services.demo import DEMO_PATH
from tests.support.evidence_replies import judge_reply

STUB_POLICY = judge_reply
STUB_IS_DEFAULT_ENDPOINT = True  # the CLI finds the stub through OPENAI_BASE_URL and OPENAI_API_KEY


def test_the_command_judges_two_stored_systems_with_their_documents_and_refuses_files(demo, runner, stub,
                                                                                      monkeypatch, tmp_path):
    monkeypatch.setenv("LEVAL_TOKENIZER", "estimate")
    with demo.app_context():
        system, baseline = [name for name, _ in db.session.execute(
            select(System.name, func.count(Prediction.id)).join(Prediction).group_by(System.name)
            .order_by(func.count(Prediction.id), System.name)).all()[:2]]
    result = runner.invoke(args=["judge", system, "--battle-with", baseline, "--profile", "evidence", "--scope", "all",
                                 "--judge-model", "evidence-test", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["profile"] == "evidence" and report["api_calls"] == stub.calls > 0
    assert all("## Document\n" in r.body["messages"][1]["content"] for r in stub.requests)
    with demo.app_context():
        rows = list(db.session.scalars(select(LLMJudgment).where(LLMJudgment.raw_reply.like("%QUOTE%")
                                                                 | LLMJudgment.raw_reply.like("%quotes%"))))
        assert rows and all(row.evidence and row.evidence["quotes"] for row in rows)
    # Files whose answers the database does not hold: no stored system, so no stored document to read.
    paths = []
    for name in ("balanced-34b", "shaky-3b"):
        rows = [json.loads(line) for line in (DEMO_PATH / "human_eval" / f"{name}.pred.jsonl")
                .read_text(encoding="utf-8").splitlines() if line.strip()]
        for row in rows:
            key = next(k for k in row if k.endswith("_pred"))
            row[key] += " (edited in a file)"
        path = tmp_path / f"{name}.pred.jsonl"
        path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
        paths.append(str(path))
    refused = runner.invoke(args=["judge", paths[0], "--battle-with", paths[1], "--profile", "evidence"])
    assert refused.exit_code != 0 and "reads the stored documents" in refused.output, refused.output
