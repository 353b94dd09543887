"""Job kinds and the context a handler runs with."""
from __future__ import annotations

import importlib
import time
from typing import TYPE_CHECKING, Callable

from flask import Flask, current_app
from sqlalchemy import select, update

from app.extensions import db

if TYPE_CHECKING:
    from app.models import Job

Handler = Callable[["JobContext"], dict | None]
# A handler, or "package.module:function" imported on first use (so create_app stays light).
HandlerRef = Handler | str


class JobCancelled(Exception):
    """Raised inside a handler when a researcher cancelled the job."""


def register_job_kinds(app: Flask, kinds: dict[str, HandlerRef]) -> None:
    """Declare, on this app, the function that runs jobs of each kind."""
    app.extensions.setdefault("job_kinds", {}).update(kinds)


def handler_for(kind: str) -> Handler:
    """The function that runs jobs of this kind on the current app; LookupError for an unknown kind."""
    kinds: dict[str, HandlerRef] = current_app.extensions.get("job_kinds", {})
    try:
        handler = kinds[kind]
    except KeyError:
        raise LookupError(f"no handler for job kind {kind!r}") from None
    if isinstance(handler, str):
        module_name, _, function = handler.partition(":")
        handler = getattr(importlib.import_module(module_name), function)
        kinds[kind] = handler
    return handler


class JobContext:
    """What a handler may do: read params, report progress, notice cancellation."""

    CANCEL_CHECK_SECONDS = 0.5

    def __init__(self, job: Job):
        self.job_id = job.id
        self.kind = job.kind
        self.params = dict(job.params or {})
        self.created_by_id = job.created_by_id
        self._last_cancel_check = 0.0
        self._cancelled = False

    def progress(self, done: int, total: int | None = None, message: str | None = None, *, commit: bool = True) -> None:
        """Record progress and a heartbeat; commits the session so per-item results land with it."""
        from app.models import Job
        from app.models.base import utcnow

        values: dict = {"done": done, "heartbeat_at": utcnow()}
        if total is not None:
            values["total"] = total
        if message is not None:
            values["message"] = message[:2000]
        db.session.execute(update(Job).where(Job.id == self.job_id).values(**values))
        if commit:
            db.session.commit()

    def cancelled(self) -> bool:
        """Return True once cancellation was requested (checked at most twice a second)."""
        from app.models import Job

        now = time.monotonic()
        if not self._cancelled and now - self._last_cancel_check >= self.CANCEL_CHECK_SECONDS:
            self._last_cancel_check = now
            self._cancelled = bool(db.session.scalar(select(Job.cancel_requested).where(Job.id == self.job_id)))
        return self._cancelled

    def raise_if_cancelled(self) -> None:
        if self.cancelled():
            raise JobCancelled()
