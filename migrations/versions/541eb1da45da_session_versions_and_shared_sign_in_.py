"""session versions and shared sign-in limits

Every account gets session_version 0 (its rows are kept). Session cookies made before this
revision carry a bare user id and are refused, so everyone signs in once more after the upgrade.
login_attempts starts empty.

Revision ID: 541eb1da45da
Revises: a04a56f377e6
Create Date: 2026-11-23 12:25:19.632074

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = '541eb1da45da'
down_revision = 'a04a56f377e6'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table('login_attempts',
    sa.Column('key', sa.String(length=80), nullable=False),
    sa.Column('window_start', sa.Float(), nullable=False),
    sa.Column('count', sa.Integer(), nullable=False),
    sa.PrimaryKeyConstraint('key', name=op.f('pk_login_attempts'))
    )
    with op.batch_alter_table('login_attempts', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_login_attempts_window_start'), ['window_start'], unique=False)

    with op.batch_alter_table('users', schema=None) as batch_op:
        batch_op.add_column(sa.Column('session_version', sa.Integer(), server_default='0', nullable=False))



def downgrade():
    with op.batch_alter_table('users', schema=None) as batch_op:
        batch_op.drop_column('session_version')

    with op.batch_alter_table('login_attempts', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_login_attempts_window_start'))

    op.drop_table('login_attempts')
