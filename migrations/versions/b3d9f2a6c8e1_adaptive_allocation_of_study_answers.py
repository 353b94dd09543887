"""Adaptive allocation of a study's answers: the policy, its budget, and each answer given at each step

Revision ID: b3d9f2a6c8e1
Revises: b7e2d94c1f35
Create Date: 2026-11-26 16:40:00.000000

Every existing study keeps today's behaviour (allocation 'fixed', its overlap unchanged); the new
columns are empty and the new table starts empty.
"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = 'b3d9f2a6c8e1'
down_revision = 'b7e2d94c1f35'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('studies', schema=None) as batch_op:
        batch_op.add_column(sa.Column('allocation', sa.String(length=10), server_default='fixed', nullable=False))
        batch_op.add_column(sa.Column('budget_documents', sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column('budget_answers', sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column('budget_hours', sa.Float(), nullable=True))
        batch_op.add_column(sa.Column('min_per_answer', sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column('tie_margin', sa.Float(), nullable=True))
    op.create_table(
        'study_allocations',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('study_id', sa.Integer(), nullable=False),
        sa.Column('user_id', sa.Integer(), nullable=False),
        sa.Column('study_answer_id', sa.Integer(), nullable=False),
        sa.Column('question_id', sa.Integer(), nullable=False),
        sa.Column('document_id', sa.Integer(), nullable=False),
        sa.Column('step', sa.Integer(), nullable=False),
        sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(['study_id'], ['studies.id'], ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['user_id'], ['users.id'], ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['study_answer_id'], ['study_answers.id'], ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['question_id'], ['questions.id'], ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['document_id'], ['documents.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('study_id', 'user_id', 'study_answer_id'),
    )
    with op.batch_alter_table('study_allocations', schema=None) as batch_op:
        for column in ('study_id', 'user_id', 'study_answer_id', 'question_id', 'document_id'):
            batch_op.create_index(batch_op.f(f'ix_study_allocations_{column}'), [column], unique=False)


def downgrade():
    op.drop_table('study_allocations')
    with op.batch_alter_table('studies', schema=None) as batch_op:
        for column in ('tie_margin', 'min_per_answer', 'budget_hours', 'budget_answers', 'budget_documents',
                       'allocation'):
            batch_op.drop_column(column)
