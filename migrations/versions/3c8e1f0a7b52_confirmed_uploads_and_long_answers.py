"""Confirmed uploads (so a second confirm says "already imported") and the long-answer flag of predictions

Existing predictions keep their rows; a stored answer over the cap for human evaluation is flagged
"shown", as it already was in studies before the cap (a researcher can hold it back on the
predictions page).

Revision ID: 3c8e1f0a7b52
Revises: 050d3a358bfb
Create Date: 2026-11-23 18:50:00.000000

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = '3c8e1f0a7b52'
down_revision = '050d3a358bfb'
branch_labels = None
depends_on = None

# The cap as it stood when this migration was written (app.services.input_rules.MAX_HUMAN_ANSWER_CHARS).
MAX_HUMAN_ANSWER_CHARS = 100_000


def upgrade():
    op.create_table('upload_batches',
    sa.Column('id', sa.String(length=32), nullable=False),
    sa.Column('user_id', sa.Integer(), nullable=True),
    sa.Column('files', sa.Integer(), nullable=False),
    sa.Column('predictions', sa.Integer(), nullable=False),
    sa.Column('systems', sa.Text(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_upload_batches_user_id_users'), ondelete='SET NULL'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_upload_batches'))
    )
    # ADD COLUMN, not a table rebuild: rebuilding predictions would cascade into everything that points at it.
    op.add_column('predictions', sa.Column('long_answer', sa.String(length=10), server_default='', nullable=False))
    op.execute(sa.text("UPDATE predictions SET long_answer = 'shown' WHERE length(text) > :cap")
               .bindparams(cap=MAX_HUMAN_ANSWER_CHARS))


def downgrade():
    op.drop_column('predictions', 'long_answer')  # SQLite 3.35+ drops a column in place
    op.drop_table('upload_batches')
