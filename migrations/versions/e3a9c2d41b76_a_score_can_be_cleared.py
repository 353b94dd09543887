"""A score can be cleared

Revision ID: e3a9c2d41b76
Revises: 9e3b5c71d2a4
Create Date: 2026-11-26 14:10:00.000000

An annotator may clear a score they keyed by mistake. The score's row stays, with no value, so its
revisions (the audit trail, the clear among them: new_value NULL) stay with it; a cleared score
counts nowhere. Every existing row has a value and is kept as it is.

Going back, a schema without clears cannot hold one: cleared scores are deleted with their
revisions, and the clear revisions of scores given again are dropped.
"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = 'e3a9c2d41b76'
down_revision = '9e3b5c71d2a4'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('scores', schema=None) as batch_op:
        batch_op.alter_column('value', existing_type=sa.Integer(), nullable=True)
    with op.batch_alter_table('score_revisions', schema=None) as batch_op:
        batch_op.alter_column('new_value', existing_type=sa.Integer(), nullable=True)


def downgrade():
    op.execute("DELETE FROM score_revisions WHERE score_id IN (SELECT id FROM scores WHERE value IS NULL)")
    op.execute("DELETE FROM scores WHERE value IS NULL")
    op.execute("DELETE FROM score_revisions WHERE new_value IS NULL")
    with op.batch_alter_table('score_revisions', schema=None) as batch_op:
        batch_op.alter_column('new_value', existing_type=sa.Integer(), nullable=False)
    with op.batch_alter_table('scores', schema=None) as batch_op:
        batch_op.alter_column('value', existing_type=sa.Integer(), nullable=False)
