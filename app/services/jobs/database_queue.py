"""huey's storage on the app's database: every server and worker process on it shares one queue.

The default on PostgreSQL (the SQLite default keeps huey's own file in the instance folder).
A task is taken with one DELETE … RETURNING of the first row not locked by another taker
(FOR UPDATE SKIP LOCKED), so each task goes to exactly one consumer, on any machine. The
storage has its own small engine: huey's consumer threads run outside Flask's app context.
"""
from __future__ import annotations

from huey import Huey
from huey.constants import EmptyData
from huey.storage import BaseStorage
from sqlalchemy import create_engine, delete, func, insert, select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.engine import Engine

from app.models import QueueCounter, QueueSchedule, QueueTask, QueueValue

TASK, SCHEDULE, VALUE, COUNTER = (QueueTask.__table__, QueueSchedule.__table__, QueueValue.__table__,
                                  QueueCounter.__table__)


class DatabaseStorage(BaseStorage):
    """huey's storage interface on four tables of a PostgreSQL database (made by the migrations)."""

    def __init__(self, name: str = "huey", url: str = "", **kwargs):
        super().__init__(name)
        self.engine: Engine = create_engine(url, pool_size=2, max_overflow=4, pool_pre_ping=True)

    def close(self):
        self.engine.dispose()
        return True

    # -- the queue ------------------------------------------------------------------------------

    def enqueue(self, data, priority=None):
        with self.engine.begin() as connection:
            connection.execute(insert(TASK).values(queue=self.name, data=data, priority=priority or 0.0))

    def dequeue(self):
        first = (select(TASK.c.id).where(TASK.c.queue == self.name)
                 .order_by(TASK.c.priority.desc(), TASK.c.id).limit(1).with_for_update(skip_locked=True))
        with self.engine.begin() as connection:
            return connection.scalar(delete(TASK).where(TASK.c.id == first.scalar_subquery())
                                     .returning(TASK.c.data))

    def queue_size(self):
        return self._scalar(select(func.count()).select_from(TASK).where(TASK.c.queue == self.name))

    def enqueued_items(self, limit=None):
        query = (select(TASK.c.data).where(TASK.c.queue == self.name)
                 .order_by(TASK.c.priority.desc(), TASK.c.id).limit(limit))
        return self._all(query)

    def flush_queue(self):
        self._run(delete(TASK).where(TASK.c.queue == self.name))

    # -- the schedule ---------------------------------------------------------------------------

    def add_to_schedule(self, data, ts):
        self._run(insert(SCHEDULE).values(queue=self.name, data=data, timestamp=ts.timestamp()))

    def read_schedule(self, ts):
        with self.engine.begin() as connection:
            rows = connection.execute(delete(SCHEDULE).where(SCHEDULE.c.queue == self.name,
                                                             SCHEDULE.c.timestamp <= ts.timestamp())
                                      .returning(SCHEDULE.c.timestamp, SCHEDULE.c.id, SCHEDULE.c.data)).all()
        return [data for _, _, data in sorted(rows)]

    def schedule_size(self):
        return self._scalar(select(func.count()).select_from(SCHEDULE).where(SCHEDULE.c.queue == self.name))

    def scheduled_items(self, limit=None):
        return self._all(select(SCHEDULE.c.data).where(SCHEDULE.c.queue == self.name)
                         .order_by(SCHEDULE.c.timestamp).limit(limit))

    def flush_schedule(self):
        self._run(delete(SCHEDULE).where(SCHEDULE.c.queue == self.name))

    # -- values (locks, revocations) and counters ------------------------------------------------

    def put_data(self, key, value, is_result=False):
        statement = pg_insert(VALUE).values(queue=self.name, key=key, value=value)
        self._run(statement.on_conflict_do_update(index_elements=[VALUE.c.queue, VALUE.c.key],
                                                  set_={"value": statement.excluded.value}))

    def peek_data(self, key):
        with self.engine.connect() as connection:
            row = connection.execute(select(VALUE.c.value).where(*self._value(key))).first()
        return row[0] if row else EmptyData

    def peek_many(self, keys):
        with self.engine.connect() as connection:
            rows = connection.execute(select(VALUE.c.key, VALUE.c.value)
                                      .where(VALUE.c.queue == self.name, VALUE.c.key.in_(list(keys))))
            return dict(rows.all())

    def pop_data(self, key):
        with self.engine.begin() as connection:
            row = connection.execute(delete(VALUE).where(*self._value(key)).returning(VALUE.c.value)).first()
        return row[0] if row else EmptyData

    def has_data_for_key(self, key):
        return self._scalar(select(func.count()).select_from(VALUE).where(*self._value(key))) > 0

    def put_if_empty(self, key, value, ttl=None):
        if ttl is not None:
            raise NotImplementedError("ttl is not supported by this storage.")
        statement = pg_insert(VALUE).values(queue=self.name, key=key, value=value).on_conflict_do_nothing()
        with self.engine.begin() as connection:
            return connection.execute(statement).rowcount == 1

    def incr(self, key, amount=1):
        statement = pg_insert(COUNTER).values(queue=self.name, key=key, value=amount)
        statement = statement.on_conflict_do_update(index_elements=[COUNTER.c.queue, COUNTER.c.key],
                                                    set_={"value": COUNTER.c.value + amount})
        with self.engine.begin() as connection:
            return connection.scalar(statement.returning(COUNTER.c.value))

    def delete_counter(self, key):
        self._run(delete(COUNTER).where(COUNTER.c.queue == self.name, COUNTER.c.key == key))

    def result_store_size(self):
        return self._scalar(select(func.count()).select_from(VALUE).where(VALUE.c.queue == self.name))

    def result_items(self):
        with self.engine.connect() as connection:
            return dict(connection.execute(select(VALUE.c.key, VALUE.c.value).where(VALUE.c.queue == self.name)).all())

    def flush_results(self):
        self._run(delete(VALUE).where(VALUE.c.queue == self.name))

    def flush_counters(self):
        self._run(delete(COUNTER).where(COUNTER.c.queue == self.name))

    # -- helpers ----------------------------------------------------------------------------------

    def _value(self, key):
        return VALUE.c.queue == self.name, VALUE.c.key == key

    def _run(self, statement) -> None:
        with self.engine.begin() as connection:
            connection.execute(statement)

    def _scalar(self, query):
        with self.engine.connect() as connection:
            return connection.scalar(query)

    def _all(self, query) -> list:
        with self.engine.connect() as connection:
            return list(connection.scalars(query))


class DatabaseHuey(Huey):
    storage_class = DatabaseStorage


__all__ = ["DatabaseHuey", "DatabaseStorage"]
