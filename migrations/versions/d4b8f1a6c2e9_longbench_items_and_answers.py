"""LongBench's questions and v2 answers: longbench_items and longbench_answers

Revision ID: d4b8f1a6c2e9
Revises: c9a4e2b7d1f3
Create Date: 2026-12-01 10:00:00.000000

Two new tables beside what is stored: LongBench's questions (v1, LongBench-E and v2) are questions of the
`longbench` collection, and these tables keep what eval.py and result.py score them with. Nothing existing
changes; the downgrade drops the two tables (LongBench's documents, questions and predictions stay, as text).
"""
from alembic import op
import sqlalchemy as sa


revision = 'd4b8f1a6c2e9'
down_revision = 'c9a4e2b7d1f3'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table('longbench_items',
    sa.Column('question_id', sa.Integer(), nullable=False),
    sa.Column('variant', sa.String(length=4), nullable=False),
    sa.Column('dataset', sa.String(length=40), nullable=False),
    sa.Column('position', sa.Integer(), nullable=False),
    sa.Column('item_id', sa.String(length=64), nullable=False),
    sa.Column('answers', sa.Text(), nullable=False),
    sa.Column('all_classes', sa.Text(), nullable=True),
    sa.Column('length', sa.Float(), nullable=True),
    sa.Column('difficulty', sa.String(length=8), nullable=False),
    sa.Column('length_class', sa.String(length=8), nullable=False),
    sa.Column('domain', sa.String(length=80), nullable=False),
    sa.ForeignKeyConstraint(['question_id'], ['questions.id'], name=op.f('fk_longbench_items_question_id_questions'),
                            ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('question_id', name=op.f('pk_longbench_items'))
    )
    with op.batch_alter_table('longbench_items', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_longbench_items_dataset'), ['dataset'], unique=False)
        batch_op.create_index(batch_op.f('ix_longbench_items_variant'), ['variant'], unique=False)
    op.create_table('longbench_answers',
    sa.Column('prediction_id', sa.Integer(), nullable=False),
    sa.Column('choice', sa.String(length=1), nullable=True),
    sa.Column('judge', sa.Boolean(), nullable=False),
    sa.ForeignKeyConstraint(['prediction_id'], ['predictions.id'],
                            name=op.f('fk_longbench_answers_prediction_id_predictions'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('prediction_id', name=op.f('pk_longbench_answers'))
    )


def downgrade():
    op.drop_table('longbench_answers')
    with op.batch_alter_table('longbench_items', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_longbench_items_variant'))
        batch_op.drop_index(batch_op.f('ix_longbench_items_dataset'))
    op.drop_table('longbench_items')
