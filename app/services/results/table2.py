"""L-Eval's Table 2, live: per open-ended task, R-L or F-1, the judge's win rate and ΔL, for each system
of a study with and without the length instruction, from stored metric aggregates and judge runs."""
from __future__ import annotations

from typing import Any

from sqlalchemy import func, select

from app.core.judge.profiles import LEVAL
from app.core.judge.profiles import PROFILES as JUDGE_PROFILES
from app.core.metrics.files import OPEN_TASKS
from app.extensions import db
from app.models import Document, Job, MetricAggregate, Prediction, Question, System
from app.models.corpus import TASKS
from app.services.cache import NO_STUDY, cached
from app.services.judge import RunSpec, win_rates
from app.services.judge.reports import task_win_rates

# The n-gram metric L-Eval's table shows for a task, by the metric its file is scored with.
METRIC_LABELS = {"rougeL": "R-L", "f1": "F-1"}


def _aggregates(names: list[str], profile: str) -> dict[tuple[str, str], dict[str, float]]:
    stmt = (select(System.name, MetricAggregate.task, MetricAggregate.metric, MetricAggregate.value)
            .join(System, System.id == MetricAggregate.system_id)
            .where(MetricAggregate.profile == profile, System.name.in_(names),
                   MetricAggregate.task.in_(OPEN_TASKS),
                   MetricAggregate.metric.in_((*METRIC_LABELS, "delta_words"))))
    found: dict[tuple[str, str], dict[str, float]] = {}
    for system, task, metric, value in db.session.execute(stmt):
        found.setdefault((system, task), {})[metric] = value
    return found


def _judge_entry(entries: list[dict], judge_profile: str | None) -> dict | None:
    """The run a system's judge column comes from: the first (default baseline first) of the wanted profile."""
    for entry in entries:
        if judge_profile is None or entry.get("profile", "default") == judge_profile:
            return entry
    return None


def default_judge_profile(systems: list[tuple[str, bool]]) -> str:
    """The judge profile Table 2 opens on: L-Eval's own (leval) if any of these systems has a run of it,
    else the first profile that has one; leval when no system has been judged at all."""
    names = [name for name, _ in systems]
    rates = win_rates(names) if names else {}
    for profile in (LEVAL, *(p for p in JUDGE_PROFILES if p != LEVAL)):
        if any(_judge_entry(entries, profile) for entries in rates.values()):
            return profile
    return LEVAL


def missing_note(data: dict[str, Any]) -> str:
    """One line saying which judge cells are empty and why, for above the table."""
    rows, profile = data["rows"], data["judge_profile"]
    unjudged = [row["system"] for row in rows if row["judge"] is None]
    judged = [row for row in rows if row["judge"] is not None]
    off_tasks = [row["system"] for row in judged
                 if all(cell["win_rate"] is None for cell in row["cells"].values())]
    parts = []
    if rows and len(unjudged) == len(rows):
        parts.append(f"No system has a {profile} judge run, so the table has no Win % column: run the judge with the "
                     f"{profile} profile or choose another judge profile.")
    elif unjudged:
        parts.append(f"{len(unjudged)} of {len(rows)} systems have no {profile} judge run (their Win % is “—”): "
                     f"{', '.join(unjudged)}.")
    if off_tasks:
        parts.append(f"The {profile} run of {', '.join(off_tasks)} judged no question of these tasks (its scope is "
                     "elsewhere, e.g. the human-evaluation subset).")
    return " ".join(parts)


def table2(systems: list[tuple[str, bool]], profile: str = "official", judge_profile: str | None = "leval"
           ) -> dict[str, Any]:
    """The table for these (system, length-instructed) rows; cached until the data change."""
    key = ("table2", tuple(systems), profile, judge_profile)
    return cached(key, lambda: _table2(systems, profile, judge_profile), study=NO_STUDY)  # metrics and judge runs only


def _table2(systems: list[tuple[str, bool]], profile: str, judge_profile: str | None) -> dict[str, Any]:
    names = [name for name, _ in systems]
    aggregates = _aggregates(names, profile)
    rates = win_rates(names) if names else {}
    metric_of: dict[str, str] = {}
    for (_, task), values in aggregates.items():
        # A file scored with ROUGE reports R-L; one scored with F1 reports F-1 (as the paper's table does).
        metric_of.setdefault(task, "rougeL" if "rougeL" in values else "f1" if "f1" in values else "")
    tasks = [task for task in OPEN_TASKS if metric_of.get(task)]
    rows = []
    # Without the length instruction first, then with it, as the paper lays them out.
    for name, flagged in sorted(systems, key=lambda s: (bool(s[1]), s[0])):
        entry = _judge_entry(rates.get(name, []), judge_profile)
        per_task = task_win_rates(_spec(entry)) if entry else {}
        cells = {}
        for task in tasks:
            values = aggregates.get((name, task), {})
            win, judged = per_task.get(task, (None, 0))
            cells[task] = {"metric": values.get(metric_of[task]), "win_rate": win, "judged": judged,
                           "delta_words": values.get("delta_words")}
        rows.append({"system": name, "length_instruction": bool(flagged), "cells": cells,
                     "judge": None if entry is None else {k: entry[k] for k in (
                         "job_id", "judge_model", "profile", "profile_label", "baseline", "scope", "prompt_version",
                         "flagged_note")}})
    data = {
        "profile": profile,
        "judge_profile": judge_profile,
        "tasks": [{"task": task, "metric": metric_of[task], "metric_label": METRIC_LABELS[metric_of[task]],
                   "columns": _filled_columns(rows, task)} for task in tasks],
        "rows": rows,
        "notes": "metric: the task's counted rows under the metric profile (R-L for ROUGE tasks, F-1 for F1 tasks); "
                 "win_rate: L-Eval's win % of the system's judge run against its baseline on that task's judged "
                 "questions; delta_words: mean answer words minus reference words on the counted rows.",
    }
    data["missing"] = missing_note(data)
    return data


def empty_reason(systems: list[tuple[str, bool]]) -> tuple[str, list[str]]:
    """Why a study's Table 2 has no row, as (reason, systems): "no_task_files" (L-Eval's open-ended task files
    are not imported: the human-evaluation subset alone never fills it), "no_task_predictions" (none of the
    study's systems answered those tasks) or "not_scored" (the systems whose task predictions wait for metrics)."""
    if db.session.scalar(select(Document.id).where(Document.collection == TASKS, Document.task.in_(OPEN_TASKS))
                         .limit(1)) is None:
        return "no_task_files", []
    names = [name for name, _ in systems]
    on_tasks = (select(System.name, func.count(Prediction.id)).join(Prediction, Prediction.system_id == System.id)
                .join(Question, Question.id == Prediction.question_id).join(Document, Document.id == Question.document_id)
                .where(Document.collection == TASKS, Document.task.in_(OPEN_TASKS)))
    answered = [name for name, n in db.session.execute(on_tasks.where(System.name.in_(names)).group_by(System.name))
                if n]
    if not answered:
        return "no_task_predictions", sorted(names)
    return "not_scored", sorted(answered)


CELL_COLUMNS = ("metric", "win_rate", "delta_words")


def _filled_columns(rows: list[dict], task: str) -> list[str]:
    """A task's columns that some system has a value in: a column empty for every system is not shown."""
    return [column for column in CELL_COLUMNS if any(row["cells"][task][column] is not None for row in rows)]


def _spec(entry: dict) -> RunSpec:
    job = db.session.get(Job, entry["job_id"])
    return RunSpec.from_params(job.params)
