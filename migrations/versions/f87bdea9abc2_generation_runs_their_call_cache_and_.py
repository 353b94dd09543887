"""Generation runs, their call cache and prompt versions; authored pairs (new tables only: no data moves)

Revision ID: f87bdea9abc2
Revises: f52a420a9770
Create Date: 2026-11-23 11:19:51.471653

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = 'f87bdea9abc2'
down_revision = 'f52a420a9770'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table('generation_prompts',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('name', sa.String(length=80), nullable=False),
    sa.Column('version', sa.Integer(), nullable=False),
    sa.Column('content', sa.JSON(), nullable=False),
    sa.Column('fingerprint', sa.String(length=64), nullable=False),
    sa.Column('created_by_id', sa.Integer(), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['created_by_id'], ['users.id'], name=op.f('fk_generation_prompts_created_by_id_users'), ondelete='SET NULL'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_generation_prompts')),
    sa.UniqueConstraint('name', 'version', name=op.f('uq_generation_prompts_name_version'))
    )
    op.create_table('authored_pairs',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('document_id', sa.Integer(), nullable=False),
    sa.Column('question_id', sa.Integer(), nullable=True),
    sa.Column('instruction', sa.Text(), nullable=False),
    sa.Column('answer', sa.Text(), nullable=False),
    sa.Column('evidence', sa.JSON(), nullable=False),
    sa.Column('version', sa.Integer(), nullable=False),
    sa.Column('author_id', sa.Integer(), nullable=True),
    sa.Column('author_name', sa.String(length=80), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('updated_by_name', sa.String(length=80), nullable=False),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('deleted_by_name', sa.String(length=80), nullable=True),
    sa.Column('deleted_at', sa.DateTime(timezone=True), nullable=True),
    sa.ForeignKeyConstraint(['author_id'], ['users.id'], name=op.f('fk_authored_pairs_author_id_users'), ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['document_id'], ['documents.id'], name=op.f('fk_authored_pairs_document_id_documents'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['question_id'], ['questions.id'], name=op.f('fk_authored_pairs_question_id_questions'), ondelete='SET NULL'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_authored_pairs'))
    )
    with op.batch_alter_table('authored_pairs', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_authored_pairs_document_id'), ['document_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_authored_pairs_question_id'), ['question_id'], unique=False)

    op.create_table('generation_runs',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('job_id', sa.Integer(), nullable=True),
    sa.Column('system_id', sa.Integer(), nullable=True),
    sa.Column('system_name', sa.String(length=120), nullable=False),
    sa.Column('prompt_id', sa.Integer(), nullable=True),
    sa.Column('spec', sa.JSON(), nullable=False),
    sa.Column('manifest', sa.JSON(), nullable=False),
    sa.Column('questions', sa.Integer(), nullable=False),
    sa.Column('answered', sa.Integer(), nullable=False),
    sa.Column('last_error', sa.Text(), nullable=True),
    sa.Column('created_by_id', sa.Integer(), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['created_by_id'], ['users.id'], name=op.f('fk_generation_runs_created_by_id_users'), ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['job_id'], ['jobs.id'], name=op.f('fk_generation_runs_job_id_jobs'), ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['prompt_id'], ['generation_prompts.id'], name=op.f('fk_generation_runs_prompt_id_generation_prompts'), ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['system_id'], ['systems.id'], name=op.f('fk_generation_runs_system_id_systems'), ondelete='SET NULL'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_generation_runs'))
    )
    with op.batch_alter_table('generation_runs', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_generation_runs_job_id'), ['job_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_generation_runs_system_id'), ['system_id'], unique=False)

    op.create_table('generation_calls',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('cache_key', sa.String(length=64), nullable=False),
    sa.Column('model', sa.String(length=200), nullable=False),
    sa.Column('reported_model', sa.String(length=200), nullable=False),
    sa.Column('endpoint', sa.String(length=300), nullable=False),
    sa.Column('reply', sa.Text(), nullable=False),
    sa.Column('finish_reason', sa.String(length=40), nullable=True),
    sa.Column('prompt_tokens', sa.Integer(), nullable=False),
    sa.Column('completion_tokens', sa.Integer(), nullable=False),
    sa.Column('latency_ms', sa.Float(), nullable=False),
    sa.Column('run_id', sa.Integer(), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['run_id'], ['generation_runs.id'], name=op.f('fk_generation_calls_run_id_generation_runs'), ondelete='SET NULL'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_generation_calls')),
    sa.UniqueConstraint('cache_key', name=op.f('uq_generation_calls_cache_key'))
    )
    with op.batch_alter_table('generation_calls', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_generation_calls_run_id'), ['run_id'], unique=False)

    op.create_table('generation_answers',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('run_id', sa.Integer(), nullable=False),
    sa.Column('question_id', sa.Integer(), nullable=False),
    sa.Column('prediction_id', sa.Integer(), nullable=True),
    sa.Column('answer_id', sa.Integer(), nullable=True),
    sa.Column('prompt', sa.Text(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['answer_id'], ['answers.id'], name=op.f('fk_generation_answers_answer_id_answers'), ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['prediction_id'], ['predictions.id'], name=op.f('fk_generation_answers_prediction_id_predictions'), ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['question_id'], ['questions.id'], name=op.f('fk_generation_answers_question_id_questions'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['run_id'], ['generation_runs.id'], name=op.f('fk_generation_answers_run_id_generation_runs'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_generation_answers')),
    sa.UniqueConstraint('run_id', 'question_id', name=op.f('uq_generation_answers_run_id_question_id'))
    )
    with op.batch_alter_table('generation_answers', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_generation_answers_question_id'), ['question_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_generation_answers_run_id'), ['run_id'], unique=False)



def downgrade():
    with op.batch_alter_table('generation_answers', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_generation_answers_run_id'))
        batch_op.drop_index(batch_op.f('ix_generation_answers_question_id'))

    op.drop_table('generation_answers')
    with op.batch_alter_table('generation_calls', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_generation_calls_run_id'))

    op.drop_table('generation_calls')
    with op.batch_alter_table('generation_runs', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_generation_runs_system_id'))
        batch_op.drop_index(batch_op.f('ix_generation_runs_job_id'))

    op.drop_table('generation_runs')
    with op.batch_alter_table('authored_pairs', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_authored_pairs_question_id'))
        batch_op.drop_index(batch_op.f('ix_authored_pairs_document_id'))

    op.drop_table('authored_pairs')
    op.drop_table('generation_prompts')
