"""Store a benchmark plugin's scores of one system: its per-row values and its table's cells replace, in one
statement each, what the same profiles held before (LV-Eval and LongBench score this way; services/benchmarks)."""
from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy import delete, insert

from app.extensions import db
from app.models import MetricAggregate, MetricResult


def replace_scores(system_id: int, profiles: Iterable[str], *, row_metric: str, table_metrics: tuple[str, ...],
                   results: list[dict], aggregates: list[dict]) -> None:
    """Delete the system's row values (row_metric) and table cells (table_metrics) under these profiles, then
    insert the new ones: a profile scored again never keeps a row or cell the new scoring did not give."""
    profiles = list(profiles)
    db.session.execute(delete(MetricResult).where(
        MetricResult.system_id == system_id, MetricResult.metric == row_metric, MetricResult.profile.in_(profiles)))
    db.session.execute(delete(MetricAggregate).where(
        MetricAggregate.system_id == system_id, MetricAggregate.metric.in_(table_metrics),
        MetricAggregate.profile.in_(profiles)))
    if results:
        db.session.execute(insert(MetricResult.__table__), results)
    if aggregates:
        db.session.execute(insert(MetricAggregate.__table__), aggregates)
