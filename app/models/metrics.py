"""Automatic metric values, per question and aggregated per system and task."""
from __future__ import annotations

from datetime import datetime

from sqlalchemy import Float, ForeignKey, Integer, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from app.extensions import db
from app.models.base import created_at_column



class MetricResult(db.Model):
    __tablename__ = "metric_results"
    __table_args__ = (UniqueConstraint("prediction_id", "metric", "profile"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    prediction_id: Mapped[int] = mapped_column(ForeignKey("predictions.id", ondelete="CASCADE"), index=True)
    system_id: Mapped[int] = mapped_column(ForeignKey("systems.id", ondelete="CASCADE"), index=True)
    question_id: Mapped[int] = mapped_column(ForeignKey("questions.id", ondelete="CASCADE"), index=True)
    metric: Mapped[str] = mapped_column(String(40))
    profile: Mapped[str] = mapped_column(String(20))
    # "counted": counted in the task score as the reference script counts it; "analysis": scored by the
    # row's own evaluation for the metric-versus-human analysis only (app.core.metrics.selection).
    scope: Mapped[str] = mapped_column(String(12), default="counted", server_default="counted")
    value: Mapped[float] = mapped_column(Float)
    job_id: Mapped[int | None] = mapped_column(ForeignKey("jobs.id", ondelete="SET NULL"))
    computed_at: Mapped[datetime] = created_at_column()


class MetricAggregate(db.Model):
    """A system's score on one task (or '*' for all), as the reference scripts aggregate it."""

    __tablename__ = "metric_aggregates"
    __table_args__ = (UniqueConstraint("system_id", "task", "metric", "profile"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    system_id: Mapped[int] = mapped_column(ForeignKey("systems.id", ondelete="CASCADE"), index=True)
    task: Mapped[str] = mapped_column(String(80))
    metric: Mapped[str] = mapped_column(String(40))
    profile: Mapped[str] = mapped_column(String(20))
    value: Mapped[float] = mapped_column(Float)
    n: Mapped[int] = mapped_column(Integer, default=0)
    job_id: Mapped[int | None] = mapped_column(ForeignKey("jobs.id", ondelete="SET NULL"))
    computed_at: Mapped[datetime] = created_at_column()
