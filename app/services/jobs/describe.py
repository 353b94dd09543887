"""What a job does, in words, for its page: one sentence per kind instead of a dump of its parameters.

Each kind reads the parameters its service submitted and the result its handler returned (plain
dicts); a kind without a sentence here is described by its system and progress only.
"""
from __future__ import annotations

from collections.abc import Callable

from app.core.benchmarks.registry import BENCHMARKS
from app.models import Job


def _count(n: object, unit: str) -> str:
    number = int(n) if isinstance(n, (int, float)) else 0
    return f"{number:,} {unit}{'' if number == 1 else 's'}"


def _profiles(params: dict) -> str:
    names = [str(p) for p in params.get("profiles") or []]
    if not names:
        return ""
    return f" under the {' and '.join(names)} profile{'' if len(names) == 1 else 's'}"


def _metrics(job: Job, params: dict, result: dict) -> str:
    system, files = params.get("system") or "?", len(params.get("files") or [])
    source = f"{system} ({_count(files, 'file')})"
    if job.status != "done":
        return f"Scores {_count(job.total or 0, 'prediction')} of {source}{_profiles(params)}."
    parts = []
    tasks = [t for t in result.get("tasks") or [] if t]
    # The other benchmarks' rows and table cells, under their keys (app.core.benchmarks): `<key>_rows`, `<key>_cells`.
    others = [(b, int(result.get(f"{b.key}_rows") or 0)) for b in BENCHMARKS if b.owns_file is not None]
    leval_rows = int(result.get("predictions") or 0) - sum(rows for _, rows in others)
    if leval_rows:
        parts.append(f"{_count(leval_rows, 'L-Eval prediction')} in {_count(len(tasks), 'task')}")
    for benchmark, rows in others:
        if rows:
            parts.append(f"{_count(rows, benchmark.label + ' prediction')} in "
                         f"{_count(result.get(f'{benchmark.key}_cells') or 0, benchmark.cell_unit)}")
    sentence = (f"Scored {_count(result.get('predictions') or 0, 'prediction')} of {source}{_profiles(params)}"
                + (f": {'; '.join(parts)}" if parts else ""))
    if result.get("unscored"):
        sentence += f". Left unscored (no known evaluation): {_count(result['unscored'], 'prediction')}"
    return sentence + "."


def _judge(job: Job, params: dict, result: dict) -> str:
    subject = (f"{params.get('system') or '?'} against {params.get('baseline') or '?'} with the judge "
               f"{params.get('judge_model') or '?'} on {_count(params.get('pairs') or 0, 'question')}")
    if job.status != "done":
        return f"Judges {subject}, each in both orders."
    sentence = f"Judged {subject}: {_count(result.get('judgments') or 0, 'judgment')}"
    if "wins" in result:
        sentence += f" ({result.get('wins')} wins, {result.get('losses')} losses, {result.get('ties')} ties)"
    return sentence + f", {_count(result.get('api_calls') or 0, 'API call')}."


def _rater(job: Job, params: dict, result: dict) -> str:
    subject = (f"{_count(params.get('answers') or 0, 'answer')} of study #{params.get('study_id')} with "
               f"{params.get('rater_model') or '?'}")
    if job.status != "done":
        return f"Rates {subject}."
    return (f"Rated {subject}: {_count(result.get('rated') or 0, 'answer')} rated, "
            f"{_count(result.get('errors') or 0, 'error')}, {_count(result.get('api_calls') or 0, 'API call')}.")


def _generate(job: Job, params: dict, result: dict) -> str:
    subject = (f"answers to the question set {params.get('question_set') or '?'} with {params.get('model') or '?'}, "
               f"stored as system {params.get('system_name') or '?'}")
    if job.status != "done":
        return f"Generates {subject}."
    return (f"Generated {subject}: {_count(result.get('answered') or 0, 'question')} answered, "
            f"{_count(result.get('pending') or 0, 'question')} without an answer.")


DESCRIBERS: dict[str, Callable[[Job, dict, dict], str]] = {
    "metrics": _metrics, "judge": _judge, "rater": _rater, "generate": _generate,
}


def describe_job(job: Job) -> str:
    """One sentence saying what the job does (or did, once done); "" for a kind without one."""
    describer = DESCRIBERS.get(job.kind)
    if describer is None:
        return ""
    return describer(job, dict(job.params or {}), dict(job.result or {}))
