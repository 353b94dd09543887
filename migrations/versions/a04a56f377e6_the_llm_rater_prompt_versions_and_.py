"""The LLM rater: prompt versions and ratings

Revision ID: a04a56f377e6
Revises: b7d2e9f4c1a3
Create Date: 2026-11-23 12:19:35.364487

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = 'a04a56f377e6'
down_revision = 'b7d2e9f4c1a3'
branch_labels = None
depends_on = None


def upgrade():
    # New tables only: nothing existing changes.
    op.create_table('rater_prompts',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('name', sa.String(length=80), nullable=False),
    sa.Column('version', sa.Integer(), nullable=False),
    sa.Column('system_text', sa.Text(), nullable=False),
    sa.Column('user_template', sa.Text(), nullable=False),
    sa.Column('created_by_id', sa.Integer(), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['created_by_id'], ['users.id'], name=op.f('fk_rater_prompts_created_by_id_users'), ondelete='SET NULL'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_rater_prompts')),
    sa.UniqueConstraint('name', 'version', name=op.f('uq_rater_prompts_name_version'))
    )
    op.create_table('llm_ratings',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('cache_key', sa.String(length=64), nullable=False),
    sa.Column('answer_id', sa.Integer(), nullable=True),
    sa.Column('rater_model', sa.String(length=120), nullable=False),
    sa.Column('prompt_id', sa.Integer(), nullable=True),
    sa.Column('temperature', sa.Float(), nullable=False),
    sa.Column('score', sa.Integer(), nullable=True),
    sa.Column('raw_reply', sa.Text(), nullable=False),
    sa.Column('error', sa.Text(), nullable=True),
    sa.Column('prompt_tokens', sa.Integer(), nullable=False),
    sa.Column('completion_tokens', sa.Integer(), nullable=False),
    sa.Column('latency_ms', sa.Float(), nullable=False),
    sa.Column('job_id', sa.Integer(), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['answer_id'], ['answers.id'], name=op.f('fk_llm_ratings_answer_id_answers'), ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['job_id'], ['jobs.id'], name=op.f('fk_llm_ratings_job_id_jobs'), ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['prompt_id'], ['rater_prompts.id'], name=op.f('fk_llm_ratings_prompt_id_rater_prompts'), ondelete='SET NULL'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_llm_ratings')),
    sa.UniqueConstraint('cache_key', name=op.f('uq_llm_ratings_cache_key'))
    )
    with op.batch_alter_table('llm_ratings', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_llm_ratings_answer_id'), ['answer_id'], unique=False)



def downgrade():
    with op.batch_alter_table('llm_ratings', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_llm_ratings_answer_id'))

    op.drop_table('llm_ratings')
    op.drop_table('rater_prompts')
