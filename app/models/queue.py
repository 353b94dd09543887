"""The job queue's storage when it lives in the database (huey's tasks, schedule, values and counters).

Used on PostgreSQL, so that server and worker processes on several machines share one queue.
"""
from __future__ import annotations

from sqlalchemy import Float, Index, Integer, LargeBinary, String
from sqlalchemy.orm import Mapped, mapped_column

from app.extensions import db


class QueueTask(db.Model):
    __tablename__ = "queue_tasks"
    __table_args__ = (Index("ix_queue_tasks_queue_priority_id", "queue", "priority", "id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    queue: Mapped[str] = mapped_column(String(40))
    data: Mapped[bytes] = mapped_column(LargeBinary)
    priority: Mapped[float] = mapped_column(Float, default=0.0)


class QueueSchedule(db.Model):
    __tablename__ = "queue_schedule"
    __table_args__ = (Index("ix_queue_schedule_queue_timestamp", "queue", "timestamp"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    queue: Mapped[str] = mapped_column(String(40))
    data: Mapped[bytes] = mapped_column(LargeBinary)
    timestamp: Mapped[float] = mapped_column(Float)


class QueueValue(db.Model):
    __tablename__ = "queue_values"

    queue: Mapped[str] = mapped_column(String(40), primary_key=True)
    key: Mapped[str] = mapped_column(String(200), primary_key=True)
    value: Mapped[bytes] = mapped_column(LargeBinary)


class QueueCounter(db.Model):
    __tablename__ = "queue_counters"

    queue: Mapped[str] = mapped_column(String(40), primary_key=True)
    key: Mapped[str] = mapped_column(String(200), primary_key=True)
    value: Mapped[int] = mapped_column(Integer, default=0)
