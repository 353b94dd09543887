"""LV-Eval predictions keep their own row's gold_ans

Revision ID: 9e3b5c71d2a4
Revises: 5ef2015c45bb
Create Date: 2026-11-26 14:00:00.000000

LV-Eval's evaluation.py scores each model folder with the `gold_ans` (keywords) of its own rows, while
the app kept one gold_ans per question: the first upload's. Each prediction now keeps its own row's.
Predictions stored before this revision get their question's gold_ans, the one they were scored with
(their upload's own may have differed; importing that model again with --replace reads it).
"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = '9e3b5c71d2a4'
down_revision = '5ef2015c45bb'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('predictions', schema=None) as batch_op:
        batch_op.add_column(sa.Column('gold_ans', sa.Text(), nullable=True))
    op.execute(
        "UPDATE predictions SET gold_ans = (SELECT lveval_items.gold_ans FROM lveval_items "
        "WHERE lveval_items.question_id = predictions.question_id) "
        "WHERE question_id IN (SELECT question_id FROM lveval_items)"
    )


def downgrade():
    with op.batch_alter_table('predictions', schema=None) as batch_op:
        batch_op.drop_column('gold_ans')
