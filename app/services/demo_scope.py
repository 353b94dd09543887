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
from contextlib import contextmanager
from dataclasses import dataclass

from sqlalchemy import exists, or_, select
from sqlalchemy.orm import with_loader_criteria

from app.extensions import db
from app.models import Document, Job, Question, Study, System

# The kinds of row that are demo or real; everything else hangs off one of them.
DEMO_MARKED = (Document, System, Study, Job)
# The data itself (a job is only work on it): what makes the database hold real data or the demo.
DATA = (Document, System, Study)
# An execution option that lifts the separation for one statement (deleting the demo counts its rows).
ALL_DATA = "leval_all_data"


def scope_options(demo: bool) -> list:
    """Statement options that keep only demo rows (`demo`) or only real ones, wherever those kinds appear
    (jobs carry the mark of the system or study they are about)."""
    return [with_loader_criteria(model, model.is_demo.is_(demo), include_aliases=True) for model in DEMO_MARKED]


@contextmanager
def both_sides():
    """Lift the separation for a block of work that is about the demo itself (deleting it counts and exports
    its rows whatever the page's view)."""
    info = db.session.info
    saved = info.get(ALL_DATA)
    info[ALL_DATA] = True
    try:
        yield
    finally:
        info[ALL_DATA] = saved


def is_lifted(execution_options, session_info) -> bool:
    """Whether a statement runs outside the separation (its own option, or a both_sides block)."""
    return bool(execution_options.get(ALL_DATA) or session_info.get(ALL_DATA))


def _unscoped(statement):
    return statement.execution_options(**{ALL_DATA: True})


def job_is_demo(params: dict) -> bool:
    """True when a job's system, baseline or study is the demo's: the job is listed with the demo."""
    ids = [params["system_id"]] if isinstance(params.get("system_id"), int) else []
    names = [params[key] for key in ("system", "system_name", "baseline") if isinstance(params.get(key), str)]
    studies = [params["study_id"]] if isinstance(params.get("study_id"), int) else []
    found = [*db.session.scalars(_unscoped(select(System.is_demo).where(or_(System.id.in_(ids), System.name.in_(names))))),
             *db.session.scalars(_unscoped(select(Study.is_demo).where(Study.id.in_(studies))))]
    return bool(found) and all(found)


@dataclass(frozen=True)
class DataPresent:
    real: bool  # anything but the demo was imported, generated or set up
    demo: bool


def data_present() -> DataPresent:
    """Which sides hold data, in one round trip (every request of the pages asks)."""
    row = db.session.execute(_unscoped(select(*(exists().where(model.is_demo.is_(side))
                                                for side in (False, True) for model in DATA)))).one()
    return DataPresent(real=any(row[:len(DATA)]), demo=any(row[len(DATA):]))


def real_data_exists() -> bool:
    return data_present().real


def questions_are_demo(question_ids: Iterable[int]) -> bool:
    """True when there are questions and every one is on a demo document: what is made of them is demo."""
    ids = list(dict.fromkeys(question_ids))
    if not ids:
        return False
    flags = set(db.session.scalars(_unscoped(select(Document.is_demo).join(Question, Question.document_id == Document.id)
                                             .where(Question.id.in_(ids)))))
    return flags == {True}
