"""Label per-row metric values counted or analysis

Revision ID: a6269316429d
Revises: 5b2d8e41c7a9
Create Date: 2026-11-23 11:22:46.049032

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = 'a6269316429d'
down_revision = '5b2d8e41c7a9'
branch_labels = None
depends_on = None

# The row's own evaluation (its document's when the row had none), as the metrics job reads it.
_ROW_EVALUATION = "COALESCE(NULLIF(p.evaluation, ''), q.evaluation)"
_ANALYSIS_ROWS = (
    "UPDATE metric_results SET scope = 'analysis' WHERE profile = :profile AND metric <> 'keyword_f1' "
    "AND prediction_id IN (SELECT p.id FROM predictions p JOIN questions q ON q.id = p.question_id "
    "WHERE {evaluation} NOT IN ('f1', 'rouge', 'exam'))"
)


def upgrade():
    with op.batch_alter_table('metric_results', schema=None) as batch_op:
        batch_op.add_column(sa.Column('scope', sa.String(length=12), server_default='counted', nullable=False))
    # Values stored before scopes existed: rows the reference script does not count (LLM and human
    # rows; under official also "F1"-style spellings) become analysis values. Aggregates keep their
    # old numbers until the system is scored again.
    bind = op.get_bind()
    bind.execute(sa.text(_ANALYSIS_ROWS.format(evaluation=_ROW_EVALUATION)), {"profile": "official"})
    bind.execute(sa.text(_ANALYSIS_ROWS.format(evaluation=f"LOWER(TRIM({_ROW_EVALUATION}))")), {"profile": "fixed"})


def downgrade():
    with op.batch_alter_table('metric_results', schema=None) as batch_op:
        batch_op.drop_column('scope')
