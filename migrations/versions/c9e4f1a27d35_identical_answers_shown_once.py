"""Identical answers from two or more systems shown once, their one score recorded for each system

Revision ID: c9e4f1a27d35
Revises: d4b8f1a6c2e9
Create Date: 2026-11-28 20:10:00.000000

A study's `merge_identical` option (on for new studies), the slot another one stands in for on the
annotator's page (`study_answers.twin_of_id`) and the score a score was recorded from
(`scores.copied_from_id`). Studies made before the option keep it off: their identical answers were
shown and scored apart, and every score, round and view stays as it was.
"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = 'c9e4f1a27d35'
down_revision = 'd4b8f1a6c2e9'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('studies', schema=None) as batch_op:
        batch_op.add_column(sa.Column('merge_identical', sa.Boolean(), server_default=sa.false(), nullable=False))
    with op.batch_alter_table('study_answers', schema=None) as batch_op:
        batch_op.add_column(sa.Column('twin_of_id', sa.Integer(), nullable=True))
        batch_op.create_index(batch_op.f('ix_study_answers_twin_of_id'), ['twin_of_id'], unique=False)
        batch_op.create_foreign_key(op.f('fk_study_answers_twin_of_id_study_answers'), 'study_answers', ['twin_of_id'],
                                    ['id'], ondelete='SET NULL')
    with op.batch_alter_table('scores', schema=None) as batch_op:
        batch_op.add_column(sa.Column('copied_from_id', sa.Integer(), nullable=True))
        batch_op.create_index(batch_op.f('ix_scores_copied_from_id'), ['copied_from_id'], unique=False)
        batch_op.create_foreign_key(op.f('fk_scores_copied_from_id_scores'), 'scores', ['copied_from_id'], ['id'],
                                    ondelete='SET NULL')


def downgrade():
    with op.batch_alter_table('scores', schema=None) as batch_op:
        batch_op.drop_constraint(op.f('fk_scores_copied_from_id_scores'), type_='foreignkey')
        batch_op.drop_index(batch_op.f('ix_scores_copied_from_id'))
        batch_op.drop_column('copied_from_id')
    with op.batch_alter_table('study_answers', schema=None) as batch_op:
        batch_op.drop_constraint(op.f('fk_study_answers_twin_of_id_study_answers'), type_='foreignkey')
        batch_op.drop_index(batch_op.f('ix_study_answers_twin_of_id'))
        batch_op.drop_column('twin_of_id')
    with op.batch_alter_table('studies', schema=None) as batch_op:
        batch_op.drop_column('merge_identical')
