"""Rename the default judge prompt: it is LEval Studio's, not L-Eval's

Revision ID: b7d2e9f4c1a3
Revises: a6269316429d
Create Date: 2026-11-23 12:10:00.000000

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = 'b7d2e9f4c1a3'
down_revision = 'a6269316429d'
branch_labels = None
depends_on = None


def upgrade():
    # Only the name changes: judgments are keyed by the prompt's text, so every cached one stays valid.
    op.get_bind().execute(sa.text("UPDATE judge_prompts SET name = 'studio-pairwise' WHERE name = 'leval-pairwise'"))


def downgrade():
    op.get_bind().execute(sa.text("UPDATE judge_prompts SET name = 'leval-pairwise' WHERE name = 'studio-pairwise'"))
