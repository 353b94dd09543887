"""Where generation writes: the call cache, the run's system and its answers, the `.pred.jsonl` download."""
from __future__ import annotations

from sqlalchemy import delete, select

from app.core.generation import predfile
from app.core.llm.batch import Reply
from app.core.text import sha256_text, word_count
from app.extensions import db
from app.models import (
    Answer,
    GenerationAnswer,
    GenerationCall,
    GenerationRun,
    MetricResult,
    Prediction,
    System,
)
from app.services.demo_scope import questions_are_demo
from app.services.input_rules import long_answer_flag
from app.services.llm import call_cache
from app.services.question_sets import select_questions, task_of
from app.services.studies.answers import snapshot


def cached_replies(keys: list[str]) -> dict[str, GenerationCall]:
    """Return the stored calls among `keys`."""
    return call_cache.rows_by_key(GenerationCall, keys)


def store_call(key: str, model: str, endpoint: str, reply: Reply, run_id: int | None) -> GenerationCall:
    """Store a successful call under its content address (committed at once: resume never repeats it)."""
    row = GenerationCall(cache_key=key, model=model, reported_model=reply.model[:200], endpoint=endpoint[:300],
                         reply=reply.text, finish_reason=reply.finish_reason, prompt_tokens=reply.prompt_tokens,
                         completion_tokens=reply.completion_tokens, latency_ms=reply.latency_ms, run_id=run_id)
    return call_cache.insert_once(GenerationCall, row)


class SystemConflict(ValueError):
    """The run's system name belongs to answers that did not come from this run."""


def system_for_run(run: GenerationRun) -> System:
    """Return the run's system: a new one (refusing a taken name), or the existing one it versions."""
    system = db.session.scalars(select(System).where(System.name == run.system_name)).first()
    existing = bool(run.spec.get("existing_system"))
    if system is None and existing:
        raise SystemConflict(f"system name: there is no system {run.system_name!r} to add answer versions to")
    if system is None:
        asked = select_questions(run.spec.get("question_set", ""), required=False)
        system = System(name=run.system_name, pred_key=predfile.pred_key(run.system_name),
                        length_instruction=bool(run.spec.get("length_instruction")), uploaded_by_id=run.created_by_id,
                        is_demo=questions_are_demo(q.question_id for q in asked))
        db.session.add(system)
        db.session.flush()
    elif run.system_id != system.id and not existing:
        raise SystemConflict(f"system name: {run.system_name!r} already exists; choose another name, or store "
                             f"the answers as new versions of it")
    elif existing and bool(system.length_instruction) != bool(run.spec.get("length_instruction")):
        raise SystemConflict(f"length instruction: {run.system_name!r} is "
                             f"{'' if system.length_instruction else 'not '}length-instructed; run it the same way")
    run.system_id = system.id
    db.session.commit()
    return system


def check_system_name(name: str, existing: bool) -> None:
    """A new system needs a free name; a new answer version needs the system to exist."""
    found = db.session.scalars(select(System.id).where(System.name == name)).first() is not None
    if found and not existing:
        raise SystemConflict(f"system name: {name!r} already exists; choose another name, or store the answers "
                             f"as new versions of it")
    if existing and not found:
        raise SystemConflict(f"system name: there is no system {name!r} to add answer versions to")


def answered_question_ids(run_id: int) -> set[int]:
    """The questions this run has stored an answer for."""
    return set(db.session.scalars(select(GenerationAnswer.question_id).where(GenerationAnswer.run_id == run_id)))


def current_predictions(system_id: int) -> dict[int, Prediction]:
    """The system's predictions by question, loaded once per run."""
    return {p.question_id: p for p in db.session.scalars(select(Prediction).where(Prediction.system_id == system_id))}


def store_answer(run_id: int, system_id: int, question_id: int, text: str, prompt: str, evaluation: str,
                 current: dict[int, Prediction]) -> None:
    """Store one answer as the system's current text and as an immutable answer version, in one commit.

    On an existing system the prediction takes the new text (its metric values go, as when an upload
    replaces it); the versions studies pinned keep theirs until a researcher pins the new one.
    `current` is the run's view of the system's predictions (from current_predictions), kept up to date here.
    """
    prediction = current.get(question_id)
    digest = sha256_text(text)
    if prediction is None:
        prediction = Prediction(system_id=system_id, question_id=question_id, text=text, text_sha256=digest,
                                prompt=prompt, evaluation=evaluation, word_count=word_count(text),
                                long_answer=long_answer_flag(text))
        db.session.add(prediction)
        db.session.flush()
        current[question_id] = prediction
        # A new prediction has no version yet: this is its first.
        version = Answer(prediction_id=prediction.id, system_id=system_id, question_id=question_id, version=1,
                         text=text, sha256=digest, word_count=prediction.word_count)
        db.session.add(version)
        db.session.flush()
    else:
        if prediction.text != text:
            db.session.execute(delete(MetricResult).where(MetricResult.prediction_id == prediction.id))
        if prediction.text != text or prediction.prompt != prompt:
            prediction.text, prediction.text_sha256, prediction.prompt = text, digest, prompt
            prediction.word_count, prediction.evaluation, prediction.file_id = word_count(text), evaluation, None
            prediction.long_answer = long_answer_flag(text)
            db.session.flush()
        version = snapshot(prediction)
    db.session.add(GenerationAnswer(run_id=run_id, question_id=question_id, prediction_id=prediction.id,
                                    answer_id=version.id, prompt=prompt))
    db.session.commit()


def pred_file(run: GenerationRun) -> tuple[str, str, int, int]:
    """Return (file name, `.pred.jsonl` text, rows, questions without an answer) in the set's order.

    Rows carry L-Eval's keys in its order: query, gt, prompt, <system>_pred, evaluation.
    """
    questions = select_questions(run.spec["question_set"])
    rows = db.session.execute(select(GenerationAnswer.question_id, Answer.text, GenerationAnswer.prompt)
                              .join(Answer, Answer.id == GenerationAnswer.answer_id)
                              .where(GenerationAnswer.run_id == run.id))
    answers = {qid: (text, prompt) for qid, text, prompt in rows}
    out = []
    for q in questions:
        if q.question_id in answers:
            text, prompt = answers[q.question_id]
            out.append(predfile.pred_row(q.instruction, q.reference, prompt or "", run.system_name, text, q.evaluation))
    task = task_of(run.spec["question_set"])
    return predfile.file_name(run.system_name, task), predfile.dumps_rows(out), len(out), len(questions) - len(out)
