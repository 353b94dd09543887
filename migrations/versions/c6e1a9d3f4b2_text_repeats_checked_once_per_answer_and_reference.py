"""The references check, stored once per answer version and reference text (content-addressed)

Revision ID: c6e1a9d3f4b2
Revises: c8a4e1f2d7b3
Create Date: 2026-12-01 10:00:00.000000

The study page compared every answer with every reference it shows on each view. The new table
holds each comparison by the two texts' sha256 and the rule that made it; it starts empty and
fills as studies are pinned or shown, so existing data stays as it is.
"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = 'c6e1a9d3f4b2'
down_revision = 'c8a4e1f2d7b3'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'text_repeats',
        sa.Column('rule', sa.String(length=40), nullable=False),
        sa.Column('text_sha256', sa.String(length=64), nullable=False),
        sa.Column('other_sha256', sa.String(length=64), nullable=False),
        sa.Column('match', sa.String(length=16), nullable=False),
        sa.PrimaryKeyConstraint('rule', 'text_sha256', 'other_sha256'),
    )


def downgrade():
    op.drop_table('text_repeats')
