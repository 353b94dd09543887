"""The forms the LLM features share: a run's launch (the judge, the rater, generation) and the prompt editor
(the judge, the rater).

Each page says how to build its run, how to queue it (the message and the page to land on) and which
error its service raises; the flow, its messages and where a duplicate lands are written once, here.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flask import flash, redirect
from flask_wtf import FlaskForm
from werkzeug.wrappers import Response

from app.models import Job
from app.services.jobs import DuplicateJob


def launch_or_estimate(form: FlaskForm, build: Callable[[], Any], *, queue: Callable[[Any], tuple[str, str]],
                       estimate: Callable[[Any], dict], refused: type[Exception],
                       duplicate_url: Callable[[Job], str | None]) -> tuple[Response | None, dict | None]:
    """(a redirect to the queued run's page, None) or (None, the dry run's estimate, or None after an error).

    `build()` makes the run's spec from the form; `queue(spec)` queues it and returns (message, url);
    `refused` is the service's error, shown as it is; `duplicate_url(job)` is where a run already
    queued or done lands (None: stay on the form).
    """
    if not form.validate_on_submit():
        if form.is_submitted():
            flash("Check the highlighted fields.", "error")
        return None, None
    try:
        spec = build()
        if form.launch.data:
            message, url = queue(spec)
            flash(message, "info")
            return redirect(url), None
        return None, estimate(spec)
    except DuplicateJob as exc:
        flash(f"The same run is already {exc.job.status}: job #{exc.job.id}.", "info")
        url = duplicate_url(exc.job)
        return (redirect(url) if url else None), None
    except refused as exc:
        flash(str(exc), "error")
        return None, None


def save_prompt_edit(form: FlaskForm, base: Any, *, create: Callable[..., Any], refused: type[Exception],
                     saved_url: Callable[[Any], str]) -> Response | None:
    """The prompt editor of the judge and the rater: a valid edit is saved as the next version (the
    services' rule, services/llm/prompt_versions) and lands on it; the form opens with `base`'s text."""
    from flask_login import current_user

    if form.validate_on_submit():
        try:
            created = create(base, system_text=form.system_text.data, user_template=form.user_template.data,
                             user_id=current_user.id)
        except refused as exc:
            flash(str(exc), "error")
        else:
            flash(f"Saved {created.name} v{created.version}; v{base.version} is unchanged.", "info")
            return redirect(saved_url(created))
    elif not form.is_submitted():
        form.system_text.data = base.system_text
        form.user_template.data = base.user_template
    return None
