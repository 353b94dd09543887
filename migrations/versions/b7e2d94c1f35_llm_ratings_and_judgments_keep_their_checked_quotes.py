"""LLM ratings and judgments keep their checked quotes (the evidence profile)

Revision ID: b7e2d94c1f35
Revises: b7d2e9f4a1c3
Create Date: 2026-11-26 17:00:00.000000

A nullable JSON column on each: existing ratings and judgments are reference-only and keep NULL.
"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = 'b7e2d94c1f35'
down_revision = 'b7d2e9f4a1c3'
branch_labels = None
depends_on = None

TABLES = ('llm_ratings', 'llm_judgments')


def upgrade():
    for table in TABLES:
        with op.batch_alter_table(table, schema=None) as batch_op:
            batch_op.add_column(sa.Column('evidence', sa.JSON(), nullable=True))


def downgrade():
    for table in TABLES:
        with op.batch_alter_table(table, schema=None) as batch_op:
            batch_op.drop_column('evidence')
