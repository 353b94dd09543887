"""Demo data apart from real data: the one owner of which rows are demo and which a view may show.

Sample data sits apart from real data, as in Label Studio's and Argilla's sample projects. Documents,
systems and studies carry `is_demo`; what is made from demo rows is demo too (a study over demo
questions, an authored copy of a demo document, a system whose predictions answer only demo
questions). While the database holds nothing else the demo is all there is; once real data exists
every page shows either the real data or, when a user asks for it (the "demo view"), the demo alone,
never the two side by side (`scope_options`, applied to every query of a request by app/web/demo_view.py).
"""
from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy import Integer, String, cast, func, or_, select
from sqlalchemy.orm import with_loader_criteria

from app.extensions import db
from app.models import Document, Job, Question, Study, System

# The kinds of row that are demo or real; everything else hangs off one of them.
DEMO_MARKED = (Document, System, Study)
# An execution option that lifts the separation for one statement (deleting the demo counts its rows).
ALL_DATA = "leval_all_data"


def scope_options(demo: bool) -> list:
    """Statement options that keep only demo rows (`demo`) or only real ones, wherever those kinds appear;
    jobs follow the system or study they are about."""
    return [*(with_loader_criteria(model, model.is_demo.is_(demo), include_aliases=True) for model in DEMO_MARKED),
            with_loader_criteria(Job, ~func.coalesce(_about_other_side(demo), False))]


def _about_other_side(demo: bool):
    # Core tables, not the ORM classes: the criteria above must not apply inside these subqueries.
    systems, studies = System.__table__, Study.__table__
    names = select(systems.c.name).where(systems.c.is_demo.is_(not demo))
    params = Job.params
    # Cast to plain types: SQLAlchemy's JSON index types warn when compared with IN.
    return or_(cast(params["system_id"].as_integer(), Integer).in_(
                   select(systems.c.id).where(systems.c.is_demo.is_(not demo))),
               *(cast(params[key].as_string(), String).in_(names) for key in ("system", "system_name", "baseline")),
               cast(params["study_id"].as_integer(), Integer).in_(
                   select(studies.c.id).where(studies.c.is_demo.is_(not demo))))


def real_data_exists() -> bool:
    """True once anything but the demo was imported, generated or set up."""
    return any(db.session.scalar(select(model.id).where(model.is_demo.is_(False)).limit(1)
                                 .execution_options(**{ALL_DATA: True})) is not None for model in DEMO_MARKED)


def demo_exists() -> bool:
    return any(db.session.scalar(select(model.id).where(model.is_demo.is_(True)).limit(1)
                                 .execution_options(**{ALL_DATA: True})) is not None for model in DEMO_MARKED)


def questions_are_demo(question_ids: Iterable[int]) -> bool:
    """True when there are questions and every one is on a demo document: what is made of them is demo."""
    ids = list(dict.fromkeys(question_ids))
    if not ids:
        return False
    flags = set(db.session.scalars(select(Document.is_demo).join(Question, Question.document_id == Document.id)
                                   .where(Question.id.in_(ids)).execution_options(**{ALL_DATA: True})))
    return flags == {True}
