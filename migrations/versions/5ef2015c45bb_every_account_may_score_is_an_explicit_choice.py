"""Every account may score: an explicit choice of a study, not an empty annotator list

Until now a study with no annotators listed was open to every account, so emptying a restricted
study's list opened it to everyone. Studies that list nobody today are open to every account and
keep that (everyone_may_score true); the others stay restricted to their list. Rows are kept.

Revision ID: 5ef2015c45bb
Revises: d1e4a7c2b9f0
Create Date: 2026-11-27 10:00:00.000000

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = '5ef2015c45bb'
down_revision = 'd1e4a7c2b9f0'
branch_labels = None
depends_on = None


def upgrade():
    # ADD COLUMN, not a table rebuild: rebuilding studies would cascade into its rounds and scores.
    op.add_column('studies', sa.Column('everyone_may_score', sa.Boolean(), server_default=sa.false(), nullable=False))
    op.execute(sa.text("UPDATE studies SET everyone_may_score = :yes WHERE id NOT IN "
                       "(SELECT study_id FROM study_annotators)").bindparams(sa.bindparam("yes", True, sa.Boolean())))


def downgrade():
    # The older schema reads an empty list as "every account": a restricted study that lists nobody
    # would open to everyone, so it is closed instead (its rows are kept).
    op.execute(sa.text("UPDATE studies SET status = 'closed' WHERE everyone_may_score = :no AND id NOT IN "
                       "(SELECT study_id FROM study_annotators)").bindparams(sa.bindparam("no", False, sa.Boolean())))
    op.drop_column('studies', 'everyone_may_score')  # SQLite 3.35+ drops a column in place
