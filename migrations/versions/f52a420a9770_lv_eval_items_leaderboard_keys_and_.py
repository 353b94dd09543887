"""LV-Eval items; leaderboard keys and ablation tags on systems

Revision ID: f52a420a9770
Revises: 541eb1da45da
Create Date: 2026-11-23 11:24:35.588530

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = 'f52a420a9770'
down_revision = '541eb1da45da'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table('lveval_items',
    sa.Column('question_id', sa.Integer(), nullable=False),
    sa.Column('dataset', sa.String(length=40), nullable=False),
    sa.Column('level', sa.String(length=8), nullable=False),
    sa.Column('occurrence', sa.Integer(), nullable=False),
    sa.Column('answers', sa.Text(), nullable=False),
    sa.Column('gold_ans', sa.Text(), nullable=True),
    sa.Column('length', sa.Integer(), nullable=True),
    sa.Column('depth', sa.Float(), nullable=True),
    sa.ForeignKeyConstraint(['question_id'], ['questions.id'], name=op.f('fk_lveval_items_question_id_questions'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('question_id', name=op.f('pk_lveval_items'))
    )
    with op.batch_alter_table('lveval_items', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_lveval_items_dataset'), ['dataset'], unique=False)

    # Plain ADD COLUMNs: rebuilding `systems` (SQLite's batch mode) would drop it and cascade into every
    # prediction and score. Existing systems state nothing yet: empty text, NULL numbers and flags.
    op.add_column('systems', sa.Column('context_window', sa.Integer(), nullable=True))
    op.add_column('systems', sa.Column('input_tokens', sa.Integer(), nullable=True))
    op.add_column('systems', sa.Column('retrieval', sa.Boolean(), nullable=True))
    op.add_column('systems', sa.Column('prompt_engineering', sa.Boolean(), nullable=True))
    op.add_column('systems', sa.Column('in_domain_data', sa.Boolean(), nullable=True))
    op.add_column('systems', sa.Column('parameters', sa.String(length=40), nullable=False, server_default=''))
    op.add_column('systems', sa.Column('links', sa.Text(), nullable=False, server_default=''))
    op.add_column('systems', sa.Column('variant_of_id', sa.Integer(), nullable=True))
    op.add_column('systems', sa.Column('variant_kind', sa.String(length=20), nullable=False, server_default=''))


def downgrade():
    for column in ('variant_kind', 'variant_of_id', 'links', 'parameters', 'in_domain_data', 'prompt_engineering',
                   'retrieval', 'input_tokens', 'context_window'):
        op.drop_column('systems', column)

    with op.batch_alter_table('lveval_items', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_lveval_items_dataset'))

    op.drop_table('lveval_items')
