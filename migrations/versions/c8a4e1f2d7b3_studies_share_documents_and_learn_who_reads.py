"""Studies share out documents and learn who reads reliably: each study's secret seed, calibration documents,
start window, a cap per annotator, the flagged annotators an owner includes again, and whether a fixed
study's questions are shared by document

Revision ID: c8a4e1f2d7b3
Revises: c9e4b1d7a3f2
Create Date: 2026-11-28 19:40:00.000000

Nothing scored moves here. Existing fixed studies are marked `shared_by_document = false`: the first start
after the upgrade (`serve` or `worker`, services/studies/assignment.share_out_migrated) gives each of their
documents to k annotators, keeping every annotator on every question they already scored. Every study gets
a secret seed of its own (drawn here, from the operating system's generator).
"""
import secrets

from alembic import op
import sqlalchemy as sa


revision = 'c8a4e1f2d7b3'
down_revision = 'c9e4b1d7a3f2'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('studies', schema=None) as batch_op:
        batch_op.add_column(sa.Column('allocation_seed', sa.String(length=64), nullable=True))
        batch_op.add_column(sa.Column('calibration_documents', sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column('start_window_hours', sa.Float(), nullable=True))
        batch_op.add_column(sa.Column('max_documents_per_annotator', sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column('included_annotators', sa.JSON(), nullable=True))
        batch_op.add_column(sa.Column('shared_by_document', sa.Boolean(), server_default=sa.false(), nullable=False))
    studies = sa.table('studies', sa.column('id', sa.Integer), sa.column('allocation_seed', sa.String))
    connection = op.get_bind()
    for (study_id,) in connection.execute(sa.select(studies.c.id)).all():
        connection.execute(studies.update().where(studies.c.id == study_id)
                           .values(allocation_seed=secrets.token_hex(16)))


def downgrade():
    with op.batch_alter_table('studies', schema=None) as batch_op:
        for column in ('shared_by_document', 'included_annotators', 'max_documents_per_annotator',
                       'start_window_hours', 'calibration_documents', 'allocation_seed'):
            batch_op.drop_column(column)
