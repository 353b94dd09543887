"""PostgreSQL: small tables keep their planner statistics as they grow a row at a time

Revision ID: c9a4e2b7d1f3
Revises: c6e1a9d3f4b2
Create Date: 2026-12-01 12:00:00.000000

autovacuum analyses a table once 50 rows and a tenth of it have changed: a table of 20 annotation
rounds was never analysed, and the planner then chose a plan ten times slower than with statistics
(issue 38). These tables hold one row per study, system, annotator or file; each gets an analyse
threshold of 5 changed rows (a storage parameter: no data moves). SQLite has no such setting.
"""
from alembic import op


# revision identifiers, used by Alembic.
revision = 'c9a4e2b7d1f3'
down_revision = 'c6e1a9d3f4b2'
branch_labels = None
depends_on = None

# One row per study, system, annotator or file (see app/services/planner_statistics).
SMALL_TABLES = ("users", "studies", "study_systems", "study_annotators", "annotation_rounds", "systems",
                "documents", "prediction_files", "upload_batches", "api_tokens", "settings")
THRESHOLD = 5


def upgrade():
    if op.get_bind().dialect.name != "postgresql":
        return
    for table in SMALL_TABLES:
        op.execute(f'ALTER TABLE "{table}" SET (autovacuum_analyze_threshold = {THRESHOLD})')


def downgrade():
    if op.get_bind().dialect.name != "postgresql":
        return
    for table in SMALL_TABLES:
        op.execute(f'ALTER TABLE "{table}" RESET (autovacuum_analyze_threshold)')
