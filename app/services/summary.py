"""Row counts of the main tables."""
from __future__ import annotations

from sqlalchemy import func, select, table

from app.extensions import db

# The tables counted, by table name: counting rows needs no mapped class, and `python run.py summary`
# (a health check) then starts without importing the models (tests hold the names to the models').
COUNTED_TABLES = ("documents", "questions", "references", "systems", "predictions", "users", "scores", "jobs")


def counts() -> dict[str, int]:
    """Return {"documents": n, "questions": n, …} of the side this session reads (the overview, `summary`).

    While one side exists alone (or nothing keeps them apart, as in /healthz) the tables are counted as
    they are; once real data sits beside the demo, through the models, so the demo's rows are left out.
    """
    from app.services.demo_scope import current

    if current() is None:
        return {name: db.session.scalar(select(func.count()).select_from(table(name))) or 0 for name in COUNTED_TABLES}
    import app.models  # noqa: F401  (every mapped class, counted through the view)

    models = {mapper.local_table.name: mapper.class_ for mapper in db.Model.registry.mappers}
    return {name: db.session.scalar(select(func.count()).select_from(models[name])) or 0 for name in COUNTED_TABLES}


def next_steps(user_id: int | None = None) -> list[dict]:
    """What the signed-in researcher can do next, most pressing first (the home page's first lines).

    Each step: {"key", "text", "endpoint"} and, where a command does it, "command" (shown as code, not in
    the text); the page links each to its area. The order follows the walkthrough: change a password that was
    printed or shown once, import data, score it, create a study, then follow the studies and jobs under way.
    """
    from app.models import Job, Study
    from app.services.accounts import has_shown_once_password
    from app.services.demo_scope import real_data_exists
    from app.services.metrics.job import unscored_systems

    steps = []
    if user_id is not None and has_shown_once_password(user_id):
        steps.append({"key": "password", "text": "Change your password: this account still has the one printed at the "
                      "first start (or shown after a reset)", "endpoint": "account.index"})
    active = db.session.scalar(select(func.count()).select_from(Job).where(Job.status.in_(("queued", "running")))) or 0
    if active:
        steps.append({"key": "jobs", "text": f"{active} job(s) queued or running", "endpoint": "jobs.index"})
    if not real_data_exists():
        steps.append({"key": "import", "text": "Import L-Eval's human-evaluation subset, or upload predictions",
                      "endpoint": "predictions.index", "command": "python run.py import-leval --download"})
        return steps
    unscored = unscored_systems()
    if unscored:
        steps.append({"key": "score", "text": f"{len(unscored)} system(s) have no metrics yet", "endpoint": "predictions.index"})
    studies = db.session.scalar(select(func.count()).select_from(Study)) or 0
    if not studies:
        steps.append({"key": "study", "text": "Create a study so annotators can score the answers", "endpoint": "studies.new"})
    else:
        steps.append({"key": "studies", "text": f"Follow your {studies} stud{'y' if studies == 1 else 'ies'}",
                      "endpoint": "studies.index"})
        steps.append({"key": "results", "text": "Compare the metrics and the judge with the human scores",
                      "endpoint": "results.human"})
    return steps
