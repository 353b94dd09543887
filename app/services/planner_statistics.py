"""PostgreSQL's planner statistics: kept current after imports and migrations, and on small tables as they grow.

PostgreSQL picks join orders from each table's size and value spread as ANALYZE last saw them.
autovacuum analyses a table only once 50 rows and a tenth of it have changed, so a table an import
just filled, or a small one that grows a row at a time (20 annotation rounds), may have no
statistics at all: a disagreement page then took 0.225 s against 0.035 s on SQLite, and 0.022 s
after ANALYZE (issue 38). So:
- an import analyses the tables it fills once it has committed (IMPORTED, SCORED);
- a run of the migrations ends with an ANALYZE of the whole database;
- a migration (c9a4e2b7d1f3) lowers the small tables' analyse threshold to 5 changed rows, so
  autovacuum keeps them analysed as they grow.
SQLite plans without statistics (the app never runs ANALYZE there): nothing here runs on it.
"""
from __future__ import annotations

from app.extensions import db

IMPORTED = ("documents", "questions", "references", "systems", "prediction_files", "predictions", "lveval_items",
            "upload_batches")
SCORED = ("users", "annotation_rounds", "scores")
STUDY_TABLES = ("studies", "study_questions", "study_systems", "study_answers", "study_hidden_references",
                "study_annotators", "study_assignments")


def analyze(*tables: str) -> None:
    """ANALYZE these tables (every table when none is named) on PostgreSQL, in a transaction of its own."""
    if db.engine.dialect.name != "postgresql":
        return
    known = set(db.metadata.tables)
    names = ", ".join(f'"{name}"' for name in tables if name in known)  # names from this module, checked anyway
    if tables and not names:
        return
    with db.engine.begin() as connection:
        connection.exec_driver_sql(f"ANALYZE {names}".strip())
