"""Idempotent API requests: the answer a creating request with an Idempotency-Key gave, replayed to a retry

Revision ID: e7c3a5f1b9d2
Revises: c9e4f1a27d35
Create Date: 2026-12-01 10:00:00.000000

A new table only: every existing row stays as it was.
"""
from alembic import op
import sqlalchemy as sa


revision = 'e7c3a5f1b9d2'
down_revision = 'c9e4f1a27d35'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'idempotent_requests',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('user_id', sa.Integer(), nullable=False),
        sa.Column('key', sa.String(length=255), nullable=False),
        sa.Column('fingerprint', sa.String(length=64), nullable=False),
        sa.Column('status', sa.Integer(), nullable=True),
        sa.Column('body', sa.Text(), nullable=False),
        sa.Column('location', sa.String(length=500), nullable=False),
        sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_idempotent_requests_user_id_users'),
                                ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_idempotent_requests')),
        sa.UniqueConstraint('user_id', 'key', name=op.f('uq_idempotent_requests_user_id_key')),
    )
    with op.batch_alter_table('idempotent_requests', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_idempotent_requests_user_id'), ['user_id'], unique=False)


def downgrade():
    with op.batch_alter_table('idempotent_requests', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_idempotent_requests_user_id'))
    op.drop_table('idempotent_requests')
