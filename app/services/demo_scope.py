"""Demo data apart from real data: the one owner of which rows are demo and which a read may see.

Sample data sits apart from real data, as in Label Studio's and Argilla's sample projects. Documents,
systems and studies carry `is_demo`; what is made from demo rows is demo too (a study over demo
questions, an authored copy of a demo document, a system whose predictions answer only demo
questions). While the database holds nothing else the demo is all there is; once real data exists
every read of a page, the API or a command sees either the real data or, when a user asks for it
(the "demo view"), the demo alone, never the two side by side.

The rule holds in every read, not only in lists of names: every table that hangs off a document, a
system or a study (predictions, metric values and aggregates, questions, answers, scores, rounds,
judgments, ratings, …) is found through its foreign keys (`_links`) and filtered with its owner, so
an aggregate, a count or a cell of the demo never reaches a real page. The entry points choose the
view: the pages and the API per request (app/web/demo_view.py), the commands per command
(app/cli/__init__.py); background jobs work on the ids they were given and see both sides.
"""
from __future__ import annotations

from collections.abc import Iterable
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache

from sqlalchemy import Table, and_, column, event, exists, false, or_, select, table, true
from sqlalchemy.orm import ORMExecuteState, Session, with_loader_criteria

from app.extensions import db

# The tables of the data itself, each row marked `is_demo` (jobs are marked too, but are only work on the
# data): what makes the database hold real data or the demo, and what every other row hangs off. Named, not
# imported, so that installing the rule loads no model (`python run.py summary` starts without them).
DATA_TABLES = ("documents", "systems", "studies")
# An execution option that lifts the separation for one statement (deleting the demo counts its rows).
ALL_DATA = "leval_all_data"
# Session info: the view asked for by the entry point (AUTO, or DEMO_VIEW), and what it resolved to.
VIEW_KEY = "leval_demo_view"
RESOLVED_KEY = "leval_demo_scope"
AUTO = "auto"  # the real data once it exists beside the demo (every page, the API and every command)
DEMO_VIEW = "demo"  # the demo alone, when a user asked to see it


def scope_options(demo: bool) -> list:
    """Statement options that keep only demo rows (`demo`) or only real ones, for every kind of row that is
    marked or hangs off a marked one (jobs carry the mark of the system or study they are about)."""
    return list(_options(demo))


def _marked() -> tuple[type, ...]:
    """The models marked demo or real: the data's and the jobs' (a job carries its system's or study's mark)."""
    from app.models import Document, Job, Study, System

    return Document, System, Study, Job


@cache
def _options(demo: bool) -> tuple:
    marked_rule, derived_rule = _DEMO_RULES if demo else _REAL_RULES
    return tuple([with_loader_criteria(model, marked_rule, include_aliases=True) for model in _marked()]
                 + [with_loader_criteria(model, derived_rule, include_aliases=True) for model, _ in _links()])


# Lambdas, so that an aliased entity (a query joining predictions twice) gets the rule on its own columns; two
# of each, with no closure, because SQLAlchemy caches a lambda's SQL by its code (the two views never share it).
_REAL_RULES = (lambda entity: entity.is_demo.is_(False), lambda entity: _outside(entity, other=True))
_DEMO_RULES = (lambda entity: entity.is_demo.is_(True), lambda entity: _outside(entity, other=False))


def _outside(entity, *, other: bool):
    """None of the entity's foreign keys leads to a row of the other side (an empty key leads nowhere)."""
    depths = _depths()
    clauses = []
    for key, nullable, target in _links_by_table()[entity.__tablename__]:
        column = getattr(entity, key)
        outside = column.not_in(_other_ids(target, other, depths))
        clauses.append(or_(column.is_(None), outside) if nullable else outside)
    return and_(*clauses)


@cache
def _links() -> tuple[tuple[type, tuple[tuple[str, bool, str], ...]], ...]:
    """(model, ((attribute, nullable, target table), …)) for every mapped class that reaches a document, a
    system or a study through its foreign keys: its rows must not belong to the other side. Derived from the
    schema, so a new table is kept apart the day it is added."""
    marked = _marked()  # imports every model first: the schema is whole before it is read
    depths = _depths()
    found = []
    for mapper in db.Model.registry.mappers:
        table = mapper.local_table
        if not isinstance(table, Table) or table.name in DATA_TABLES or table.name not in depths \
                or mapper.class_ in marked:
            continue
        links = tuple(sorted((mapper.get_property_by_column(fk.parent).key, bool(fk.parent.nullable), fk.column.table.name)
                             for fk in table.foreign_keys
                             if fk.column.table.name in depths and fk.column.table.name != table.name))
        if links:
            found.append((mapper.class_, links))
    return tuple(found)


@cache
def _links_by_table() -> dict[str, tuple[tuple[str, bool, str], ...]]:
    return {model.__tablename__: links for model, links in _links()}


@cache
def _depths() -> dict[str, int]:
    """How many foreign-key steps each table is from a document, a system or a study (roots: 0)."""
    tables = db.metadata.tables
    depths = {name: 0 for name in DATA_TABLES}
    changed = True
    while changed:
        changed = False
        for name, table in tables.items():
            steps = [depths[fk.column.table.name] + 1 for fk in table.foreign_keys
                     if fk.column.table.name in depths and fk.column.table.name != name]
            if steps and min(steps) < depths.get(name, 1 << 30):
                depths[name] = min(steps)
                changed = True
    return depths


def _other_ids(name: str, other: bool, depths: dict[str, int]):
    """The ids of table `name`'s rows on the other side, in plain Core (no entity, so no criteria of its own):
    a root's rows by their mark, any other table's through its shortest way to a root."""
    table = db.metadata.tables[name]
    if depths[name] == 0:
        return select(table.c.id).where(table.c.is_demo.is_(true() if other else false()))
    nearest = [fk for fk in table.foreign_keys
               if fk.column.table.name in depths and depths[fk.column.table.name] == depths[name] - 1]
    return select(table.c.id).where(or_(*(fk.parent.in_(_other_ids(fk.column.table.name, other, depths))
                                         for fk in nearest)))


# --- Which side a session reads ------------------------------------------------------------------


def install() -> None:
    """Scope every ORM read of a session whose entry point chose a view (once per process)."""
    if not event.contains(Session, "do_orm_execute", _scope_statement):
        event.listen(Session, "do_orm_execute", _scope_statement)
        event.listen(Session, "after_flush", _forget_presence)


def enter(view: str | None = AUTO) -> None:
    """Choose the view of this session's reads: AUTO (the real data beside the demo), DEMO_VIEW, or None."""
    info = db.session.info
    info[VIEW_KEY] = view
    info.pop(RESOLVED_KEY, None)


def current() -> bool | None:
    """The side this session reads: False (real only), True (demo only) or None (everything: one side alone,
    no view chosen, or a both_sides block)."""
    return _resolve(db.session)


def _resolve(session: Session) -> bool | None:
    info = session.info
    view = info.get(VIEW_KEY)
    if view is None or info.get(ALL_DATA):
        return None
    if RESOLVED_KEY not in info:
        present = _present(session)
        info[RESOLVED_KEY] = (view == DEMO_VIEW) if present.real and present.demo else None
    return info[RESOLVED_KEY]


def _scope_statement(state: ORMExecuteState) -> None:
    if not (state.is_select or state.is_relationship_load) or is_lifted(state.execution_options, state.session.info):
        return
    scope = _resolve(state.session)
    if scope is not None:
        state.statement = state.statement.options(*_options(scope))


def _forget_presence(session: Session, _context) -> None:
    """A flush that adds or removes documents, systems or studies may change which sides exist."""
    if RESOLVED_KEY in session.info and any(getattr(row, "__tablename__", None) in DATA_TABLES
                                            for row in (*session.new, *session.deleted)):
        session.info.pop(RESOLVED_KEY, None)


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
    from app.models import Study, System

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
    """Which sides hold data, in one round trip."""
    return _present(db.session)


def _present(session: Session) -> DataPresent:
    marks = [table(name, column("is_demo")).c.is_demo for name in DATA_TABLES]
    row = session.execute(_unscoped(select(*(exists().where(mark.is_(true() if side else false()))
                                             for side in (False, True) for mark in marks)))).one()
    return DataPresent(real=any(row[:len(marks)]), demo=any(row[len(marks):]))


def real_data_exists() -> bool:
    return data_present().real


def questions_are_demo(question_ids: Iterable[int]) -> bool:
    """True when there are questions and every one is on a demo document: what is made of them is demo."""
    return question_demo_marks(question_ids) == {True}


def question_demo_marks(question_ids: Iterable[int]) -> set[bool]:
    """The demo marks of these questions' documents (a chunked import gathers them chunk by chunk)."""
    from app.models import Document, Question

    ids = list(dict.fromkeys(question_ids))
    if not ids:
        return set()
    return set(db.session.scalars(_unscoped(select(Document.is_demo).join(Question, Question.document_id == Document.id)
                                            .where(Question.id.in_(ids)))))
