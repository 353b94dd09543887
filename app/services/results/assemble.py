"""Assemble the data of a study's results pages and of its `results` export from the database.

Everything is per study: only its scores, on the answer versions it shows (stale scores only when
asked for), its systems and its questions.
"""
from __future__ import annotations

from collections.abc import Callable, Collection, Hashable
from datetime import datetime, timezone
from typing import Any, TypeVar

from flask import g, has_request_context
from sqlalchemy import select

from app.core.judge.profiles import PROFILES as JUDGE_PROFILES
from app.core.metrics.profiles import PROFILES
from app.core.stats.analyses import PARTS
from app.core.stats.bootstrap import DEFAULT_RESAMPLES
from app.core.version import __version__
from app.extensions import db
from app.models import Document, Question, Study, StudySystem, System
from app.services.studies.allocation import SAMPLING_NOTE
from app.services.studies.twins import summary as twins_summary
from app.services.cache import cached
from app.services.results.judge_rates import WinRates, load_win_rates
from app.services.results.metric_values import (
    LENGTH_KEY,
    PROFILE_LABELS,
    MetricColumn,
    item_values,
    metric_columns,
    missing_reason,
)
from app.services.results.scores import VIEWS, CurrentScores, load_current_scores
from app.services.results.table2 import table2

T = TypeVar("T")
DISAGREEMENTS_SHOWN = 20


def request_cached(key: Hashable, compute: Callable[[], T]) -> T:
    """Compute once per request; several parts of a page (and of a view) share the same reads."""
    if not has_request_context():
        return compute()
    cache = g.setdefault("_results_cache", {})
    if key not in cache:
        cache[key] = compute()
    return cache[key]


def current_scores(study_id: int, include_stale: bool = False) -> CurrentScores:
    return cached(("scores", study_id, include_stale),
                  lambda: load_current_scores(study_id, include_stale=include_stale), study=study_id)


def rater_agreement(study_id: int, view: str = "all") -> list[dict[str, Any]]:
    """Each LLM rater run of the study against the annotators of one view (cached until the data change)."""
    _check(view, "official")

    def compute() -> list[dict[str, Any]]:
        from app.services.rater.reports import rater_agreement as agreement

        return agreement(study_id, current_scores(study_id).for_view(view))

    return cached(("rater-agreement", study_id, view), compute, study=study_id)


def study_systems(study_id: int) -> list[tuple[str, bool]]:
    """(name, length-instructed) of the study's systems, by name."""
    return request_cached(("systems", study_id), lambda: [tuple(row) for row in db.session.execute(
        select(System.name, System.length_instruction).join(StudySystem, StudySystem.system_id == System.id)
        .where(StudySystem.study_id == study_id).order_by(System.name)
    )])


def length_instructed_systems(study_id: int) -> list[str]:
    """Names of the study's systems flagged as generated with L-Eval's length instruction."""
    return [name for name, flagged in study_systems(study_id) if flagged]


def columns_for(study_id: int, profile: str, win_rates: WinRates | None = None) -> list[MetricColumn]:
    """Every measure compared with the humans, for one metric profile."""
    if win_rates is not None:
        return metric_columns(study_id, profile, win_rates)
    names = [name for name, _ in study_systems(study_id)]
    return cached(("columns", study_id, profile),
                  lambda: metric_columns(study_id, profile, request_cached(("win_rates", study_id),
                                                                          lambda: load_win_rates(names))),
                  study=study_id, scores=False)  # metric values, judge and rater runs: a save leaves them


def sampling_note(study: Study) -> str | None:
    """What every analysis page of the study says about its sampling: the note for an adaptive study, else None."""
    return SAMPLING_NOTE if study.adaptive else None


def honest_records(study_id: int, records: list[dict]) -> tuple[list[dict], dict[str, Any] | None]:
    """The records an analysis may use, and what to say about them: all of a fixed study's; of an adaptive
    study's, those on the questions every system was scored on (see studies.allocation.SAMPLING_NOTE)."""
    from app.core.stats.records import on_common_questions, question_key

    if db.session.scalar(select(Study.allocation).where(Study.id == study_id)) != "adaptive":
        return records, None
    kept = on_common_questions(records)
    return kept, {"allocation": "adaptive", "note": SAMPLING_NOTE,
                  "questions_used": len({question_key(r) for r in kept}),
                  "questions_scored": len({question_key(r) for r in records})}


def _check(view: str, profile: str) -> None:
    if view not in VIEWS:
        raise ValueError(f"view must be one of {VIEWS}, not {view!r}")
    if profile not in PROFILES:
        raise ValueError(f"profile must be one of {PROFILES}, not {profile!r}")


def analyse(study_id: int, view: str = "all", profile: str = "official", *, parts: Collection[str] = PARTS,
            win_rates: WinRates | None = None, n_resamples: int = DEFAULT_RESAMPLES,
            include_stale: bool = False) -> dict[str, Any]:
    """Run the analyses of the results pages (`parts`: those a page shows) on the study's current scores of one view."""
    _check(view, profile)
    parts = tuple(part for part in PARTS if part in parts)
    correlated = "correlation" in parts

    def compute() -> dict[str, Any]:
        from app.core.stats.analyses import (
            build_results,  # numpy loads on the first analysis, not at start
        )

        scores = current_scores(study_id, include_stale)
        # Only the correlations read metric values and judge win rates.
        columns = columns_for(study_id, profile, win_rates) if correlated else []
        usable = [column for column in columns if column.values]
        records, sampling = honest_records(study_id, scores.for_view(view))
        results = build_results(
            records, {column.label: column.values for column in usable},
            length_instructed=length_instructed_systems(study_id), n_resamples=n_resamples, parts=parts,
        )
        results.update(
            study_id=study_id, view=view, profile=profile, profile_label=PROFILE_LABELS[profile],
            n_included=scores.n_included, include_stale=include_stale,
            n_stale=sum(1 for record in scores.records if record.get("stale")),
            progress=[p.to_dict() for p in scores.progress], finished_annotators=scores.finished_annotators,
            length_instructed=length_instructed_systems(study_id), sampling=sampling,
        )
        if correlated:
            results.update(
                metric_columns=[column.to_dict() for column in usable],
                missing_metrics=[column.label for column in columns if not column.values],
                missing_reasons={column.label: missing_reason(column, columns)
                                 for column in columns if not column.values},
            )
        return results

    if win_rates is not None:
        return compute()
    return cached(("analysis", study_id, view, profile, parts, n_resamples, include_stale), compute, study=study_id)


def disagreements(study_id: int, column_key: str, view: str = "all", profile: str = "official",
                  top_k: int | None = DISAGREEMENTS_SHOWN) -> list[dict[str, Any]]:
    """Rank questions by how differently one measure and the humans order the systems' answers."""
    _check(view, profile)
    return cached(("disagreements", study_id, column_key, view, profile, top_k),
                  lambda: _disagreements(study_id, column_key, view, profile, top_k), study=study_id)


def _disagreements(study_id: int, column_key: str, view: str, profile: str, top_k: int | None) -> list[dict[str, Any]]:
    from app.core.stats.correlation import find_disagreements

    human = _item_means(study_id, view)
    values = cached(("item-values", study_id, column_key, profile), lambda: item_values(study_id, column_key, profile),
                    study=study_id, scores=False)
    items = []
    for (system, document_id, question_id), mean in human.items():
        value = values.get((system, document_id, question_id))
        if value is not None:
            items.append({"system": system, "document_id": document_id, "question_id": question_id,
                          "metric": value, "human": mean})
    found = [row.to_dict() for row in find_disagreements(items, top_k=top_k)]
    texts = _question_texts({int(row["question_id"]) for row in found})
    for row in found:
        row["question"], row["document"], row["task"] = texts.get(int(row["question_id"]), ("", "", ""))
        row["metric_values"] = {s: values.get((s, row["document_id"], row["question_id"])) for s in row["metric_ranks"]}
        row["human_means"] = {s: human.get((s, row["document_id"], row["question_id"])) for s in row["human_ranks"]}
    return found


def _item_means(study_id: int, view: str) -> dict[tuple[str, str, str], float]:
    """Each answer's mean human score in one view, shared by every measure's disagreements (the results JSON
    ranks them for a dozen measures)."""
    def compute() -> dict[tuple[str, str, str], float]:
        from app.core.stats.human import item_means

        records, _ = honest_records(study_id, current_scores(study_id).for_view(view))  # adaptive: common questions
        return item_means(records)

    return cached(("item-means", study_id, view), compute, study=study_id)


def _question_texts(question_ids: set[int]) -> dict[int, tuple[str, str, str]]:
    if not question_ids:
        return {}
    stmt = (select(Question.id, Question.instruction, Document.title, Document.task)
            .join(Document, Document.id == Question.document_id).where(Question.id.in_(question_ids)))
    return {qid: (instruction, title, task) for qid, instruction, title, task in db.session.execute(stmt)}


def _profile_section(study_id: int, records: list[dict], columns: list[MetricColumn], flagged: list[str],
                     view: str, profile: str) -> dict[str, Any]:
    """Correlations, ranks, plain-versus-instructed τ and disagreements under one metric profile."""
    from app.core.stats.correlation import (
        length_instruction_comparison,
        metric_vs_human,
        rank_table,
    )
    from app.core.stats.human import system_means

    usable = [column for column in columns if column.values]
    values = {column.label: column.values for column in usable}
    means = system_means(records)
    return {
        "profile_label": PROFILE_LABELS[profile],
        "metric_columns": [column.to_dict() for column in usable],
        "correlations": [row.to_dict() for row in metric_vs_human(means, values)],
        "ranks": [row.to_dict() for row in rank_table(means, values)] if means else [],
        "length_instruction": [row.to_dict() for row in length_instruction_comparison(means, values, flagged)]
        if flagged else [],
        "disagreements": {
            column.key: disagreements(study_id, column.key, view, profile)
            for column in usable if column.source in ("metric", "length")
        },
    }


def full_results(study_id: int, win_rates: WinRates | None = None,
                 n_resamples: int = DEFAULT_RESAMPLES) -> dict[str, Any]:
    """Return every aggregate of a study's results pages, for both views and both profiles, as one JSON object."""
    if win_rates is None:
        results = cached(("full", study_id, n_resamples), lambda: _full_results(study_id, None, n_resamples),
                         study=study_id)
        return {**results, "generated_at": datetime.now(timezone.utc).isoformat(timespec="seconds")}
    return _full_results(study_id, win_rates, n_resamples)


def _full_results(study_id: int, win_rates: WinRates | None, n_resamples: int) -> dict[str, Any]:
    from app.core.stats.analyses import build_results
    from app.core.stats.correlation import min_significant_tau

    study = db.session.get(Study, study_id)
    scores = current_scores(study_id)
    systems = study_systems(study_id)
    flagged = length_instructed_systems(study_id)
    columns = {profile: columns_for(study_id, profile, win_rates) for profile in PROFILES}  # cached: no score read
    views: dict[str, Any] = {}
    sampling = None
    for view in VIEWS:
        if view != "all" and len(scores.for_view(view)) == len(scores.records):
            views[view] = views["all"]  # every annotator finished: the same scores, the same analysis (computed once)
            continue
        records, sampling = honest_records(study_id, scores.for_view(view))
        human = build_results(records, {}, n_resamples=n_resamples)
        for key in ("correlations", "ranks"):
            human.pop(key, None)
        human["profiles"] = {
            profile: _profile_section(study_id, records, columns[profile], flagged, view, profile)
            for profile in PROFILES
        }
        views[view] = human
    return {
        "app_version": __version__,
        "generated_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "study": {"id": study.id, "name": study.name, "status": study.status} if study else None,
        "scores_used": "each annotator's latest round in the study, on the answer versions the study shows "
                       "(stale scores left out)",
        "sampling": sampling or {"allocation": "fixed"},
        "identical_answers": twins_summary(study) if study else None,
        "n_included_answers": scores.n_included,
        "annotators": [p.to_dict() for p in scores.progress],
        "systems": [{"system": name, "length_instruction": bool(flag)} for name, flag in systems],
        "significance_threshold_tau_7_systems": min_significant_tau(7),
        "length_key": LENGTH_KEY,
        "views": views,
        # L-Eval's Table 2 per metric profile and judge profile (see services/results/table2).
        "table2": {profile: {judge: table2(systems, profile, judge) for judge in JUDGE_PROFILES}
                   for profile in PROFILES},
    }
