"""Build bench_scale's instances S1, S2 and S3 with the project's own commands, from ../shared data.

- **S1:** L-Eval's human-eval subset (7 systems × 85 questions); 3 annotators score every answer.
- **S2:** the same subset and 63 seeded synthetic systems (70 systems); a 21-system study that
  10 annotators score whole (17,850 scores).
- **S3:** all of ../shared/leval (every task's documents, L-Eval's own systems), 49 seeded synthetic
  systems answering every question of L-Eval's task files and of the subset, and 5 LV-Eval models
  from the test generators (tests/support/lveval_data.py, 100 rows per file: 27,500 predictions);
  a 24-system study (2,040 answers) that 20 annotators each score about half of.

Every step is a `python run.py` command (import-leval, import-lveval, score-metrics, create-user,
study create, token create) except the scores, which tests/support/scoring_data.generate_scores
writes as bench_results does (seeded; no command scores on an annotator's behalf). The synthetic
systems' files are derived from ../shared at build time in a temporary folder, never kept.
"""
from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from common import REPO_ROOT, SHARED_LEVAL

LEVAL_SYSTEMS = ("chatglm2-6b-8k", "claude-100k", "gpt4-32k", "llama2-13b-chat-4k", "longchat-13b-16k-flash",
                 "turbo-16k-0613", "vicuna-7b-2k")  # the subset's seven, as their files name them
RESEARCHER, RESEARCHER_PASSWORD = "scale-admin", "scale-pass-123"


@dataclass(frozen=True)
class Scale:
    name: str
    synthetic_systems: int  # seeded systems beside L-Eval's own
    whole_leval: bool  # all of ../shared/leval (every task's questions), or the human-eval subset alone
    lveval_models: int
    lveval_rows: int  # rows per <dataset>_<level>.jsonl
    study_synthetic: int  # synthetic systems in the study beside the subset's seven
    annotators: int
    coverage: float  # the share of the study's answers each annotator scores


SCALES = {
    "S1": Scale("S1", 0, False, 0, 0, 0, 3, 1.0),
    "S2": Scale("S2", 63, False, 0, 0, 14, 10, 1.0),
    "S3": Scale("S3", 49, True, 5, 100, 17, 20, 0.5),
}


@dataclass
class Built:
    scale: Scale
    instance: Path
    database_url: str | None
    token: str = ""
    study_id: int = 0
    study_name: str = "Scale study"
    counts: dict = field(default_factory=dict)
    ids: dict = field(default_factory=dict)  # what the pages' paths name: study, question, system, annotator
    steps: dict = field(default_factory=dict)  # step -> (wall s, peak RSS MB of the command)

    def env(self) -> dict:
        return command_env(self.instance, self.database_url)


def command_env(instance: Path, database_url: str | None) -> dict:
    env = {**os.environ, "LEVAL_INSTANCE": str(instance), "PYTHONUNBUFFERED": "1", "LEVAL_DEMO": "0"}
    env.pop("LEVAL_DATABASE_URL", None)
    if database_url:
        env["LEVAL_DATABASE_URL"] = database_url
    return env


def run_command(built: Built, step: str, args: list[str], stdin: str | None = None) -> str:
    """Run `python run.py ARGS`; record its wall time; return its output."""
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "run.py", *args], cwd=REPO_ROOT, env=built.env(), input=stdin,
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"run.py {' '.join(args[:2])} exited with {done.returncode}:\n{done.stderr[-3000:]}")
    built.steps[step] = (time.perf_counter() - started, None)
    return done.stdout


def peak_of_command(built: Built, step: str, args: list[str]) -> float:
    """Run one command alone in a child of its own, so its peak RSS is its own; return the peak in MB."""
    code = ("import resource, subprocess, sys; "
            "p = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True); "
            "sys.stderr.write(p.stderr[-3000:]) if p.returncode else None; "
            "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss); sys.exit(p.returncode)")
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", code, sys.executable, "run.py", *args], cwd=REPO_ROOT,
                          env=built.env(), capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"run.py {' '.join(args[:2])} exited with {done.returncode}:\n{done.stderr}")
    peak = int(done.stdout.split()[-1]) / 1024
    built.steps[step] = (time.perf_counter() - started, peak)
    return peak


# --- synthetic systems ---------------------------------------------------------------------------


def _read_jsonl(path: Path) -> list[dict]:
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def _perturb(text: str, rng: random.Random, drop: float, pool: list[str]) -> str:
    """The text with a share of its words dropped and a few replaced by words of the question's pool."""
    out = []
    for word in text.split():
        roll = rng.random()
        if roll < drop:
            continue
        out.append(rng.choice(pool) if roll < drop + 0.03 and pool else word)
    return " ".join(out) or (text.split() or ["unknown"])[0]


def _subset_rows() -> list[tuple[str, str, list[str]]]:
    """(query, gt, the seven systems' answers) of each row of the human-eval subset, in file order."""
    folder = SHARED_LEVAL / "Predictions" / "human_eval"
    answers: dict[tuple[str, str], list[str]] = {}
    for name in LEVAL_SYSTEMS:
        for row in _read_jsonl(folder / f"{name}.pred.jsonl"):
            key = next(k for k in row if k.endswith("_pred"))
            answers.setdefault((row["query"], row["gt"]), []).append(str(row[key]))
    return [(query, gt, texts) for (query, gt), texts in answers.items()]


def _task_rows() -> list[tuple[str, list[tuple[str, str, str]]]]:
    """(task, [(query, gt, evaluation)]) of every L-Eval task file in ../shared."""
    tasks = []
    for path in sorted((SHARED_LEVAL / "LEval-data").glob("*/*.jsonl")):
        rows = []
        for document in _read_jsonl(path):
            for query, gt in zip(document["instructions"], document["outputs"]):
                rows.append((query, gt, document.get("evaluation", "")))
        tasks.append((path.stem, rows))
    return tasks


def write_synthetic(folder: Path, scale: Scale, seed: int = 38) -> int:
    """Write the scale's synthetic systems as L-Eval prediction files; return how many rows."""
    subset = _subset_rows()
    tasks = _task_rows() if scale.whole_leval else []
    written = 0
    for index in range(scale.synthetic_systems):
        name = synthetic_name(index)
        rng = random.Random(f"{seed}/{name}")
        drop = 0.02 + 0.4 * index / max(1, scale.synthetic_systems - 1)  # from near copies to loose paraphrases
        lines = []
        for query, gt, texts in subset:
            base = rng.choice(texts)
            lines.append({"query": query, "gt": gt, f"{name}_pred": _perturb(base, rng, drop, gt.split()),
                          "evaluation": "human"})
        _write(folder / "human_eval" / f"{name}.pred.jsonl", lines)
        written += len(lines)
        for task, rows in tasks:
            lines = []
            for query, gt, evaluation in rows:
                words = gt.split()
                if len(words) <= 3:  # a choice or a number: right with the system's skill, else another letter
                    answer = gt if rng.random() > drop else rng.choice("ABCD")
                else:
                    answer = _perturb(gt, rng, 0.3 + drop, query.split())
                lines.append({"query": query, "gt": gt, f"{name}_pred": answer, "evaluation": evaluation})
            _write(folder / name / f"{task}.pred.jsonl", lines)
            written += len(lines)
    return written


def synthetic_name(index: int) -> str:
    return f"synth-{index:02d}"


def _write(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")


def write_lveval(folder: Path, scale: Scale) -> None:
    from tests.support.lveval_data import write_model

    for index in range(scale.lveval_models):
        write_model(folder, f"lveval-model-{index}", seed=index, rows=scale.lveval_rows, skill=0.4 + 0.1 * index)


# --- the build -----------------------------------------------------------------------------------


def build(scale: Scale, instance: Path, work: Path, database_url: str | None = None) -> Built:
    """Build one instance; every step's wall time and peak memory go to Built.steps."""
    built = Built(scale, instance, database_url)
    source = SHARED_LEVAL if scale.whole_leval else SHARED_LEVAL / "Predictions" / "human_eval"
    run_command(built, "import-leval ../shared", ["import-leval", "--json", str(source)])
    if scale.synthetic_systems:
        synthetic = work / f"synthetic-{scale.name}"
        rows = write_synthetic(synthetic, scale)
        peak_of_command(built, f"import-leval synthetic ({rows:,} rows)", ["import-leval", "--json", str(synthetic)])
    if scale.lveval_models:
        lveval = work / f"lveval-{scale.name}"
        write_lveval(lveval, scale)
        peak_of_command(built, "import-lveval", ["import-lveval", "--json", str(lveval)])
    run_command(built, "score-metrics", ["score-metrics"])
    run_command(built, "create-user", ["create-user", RESEARCHER, "--role", "admin", "--password-stdin"],
                stdin=RESEARCHER_PASSWORD + "\n")
    systems = [*LEVAL_SYSTEMS, *(synthetic_name(i) for i in range(scale.study_synthetic))]
    run_command(built, "study create", ["study", "create", built.study_name, "--questions", "human_eval",
                                        "--systems", ",".join(systems), "--open"])
    out = run_command(built, "token create", ["token", "create", RESEARCHER, "--scope", "read"])
    built.token = next(word for word in out.split() if word.startswith("lvs_"))
    started = time.perf_counter()
    _scores(built)
    built.steps["scores (generate_scores)"] = (time.perf_counter() - started, None)
    return built


def annotator_names(scale: Scale) -> list[str]:
    return [f"annotator{i:02d}" for i in range(scale.annotators)]


def _scores(built: Built) -> None:
    """Seeded scores for the study (as bench_results), then the counts the growth exponents use."""
    from sqlalchemy import func, select

    from app import create_app
    from app.extensions import db
    from app.models import MetricResult, Prediction, Score, StudyAnswer, StudyQuestion, System
    from app.services.studies.lookup import require_study
    from tests.support.scoring_data import generate_scores

    config = {"INSTANCE_PATH": built.instance, "TESTING": True}
    if built.database_url:
        config["SQLALCHEMY_DATABASE_URI"] = built.database_url
    app = create_app(config)
    with app.app_context():
        built.study_id = require_study(name=built.study_name).id
        generate_scores(annotator_names(built.scale), seed=38, coverage=built.scale.coverage, study_id=built.study_id)
        count = lambda model: db.session.scalar(select(func.count()).select_from(model))  # noqa: E731
        built.counts = {"systems": count(System), "predictions": count(Prediction),
                        "metric values": count(MetricResult), "study answers": count(StudyAnswer),
                        "scores": count(Score)}
        built.ids = {
            "study": built.study_id, "annotator": annotator_names(built.scale)[0],
            "question": db.session.scalar(select(func.min(StudyQuestion.question_id))
                                          .where(StudyQuestion.study_id == built.study_id)),
            "system": db.session.scalar(select(System.id).where(System.name == "gpt4-32k")),
        }
        db.session.remove()
        db.engine.dispose()
