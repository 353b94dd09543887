"""Jobs carry the demo mark of the system or study they are about

Revision ID: a8c3f1d6e2b7
Revises: e3a9c2d41b76
Create Date: 2026-11-26 14:20:00.000000

The demo is kept apart from real data (services/demo_scope.py); a job about a demo system or study
is listed with the demo. Existing jobs take the mark from their params: system_id, system,
system_name, baseline (names) and study_id, all of them demo.
"""
import json

from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = 'a8c3f1d6e2b7'
down_revision = 'e3a9c2d41b76'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('jobs', schema=None) as batch_op:
        batch_op.add_column(sa.Column('is_demo', sa.Boolean(), server_default=sa.false(), nullable=False))
    bind = op.get_bind()
    demo_systems = {row[0]: row[1] for row in bind.execute(sa.text("SELECT id, name FROM systems WHERE is_demo"))}
    real_systems = {row[0]: row[1] for row in bind.execute(sa.text("SELECT id, name FROM systems WHERE NOT is_demo"))}
    demo_studies = {row[0] for row in bind.execute(sa.text("SELECT id FROM studies WHERE is_demo"))}
    real_studies = {row[0] for row in bind.execute(sa.text("SELECT id FROM studies WHERE NOT is_demo"))}
    demo_names, real_names = set(demo_systems.values()), set(real_systems.values())
    marked = []
    for job_id, params in bind.execute(sa.text("SELECT id, params FROM jobs")).all():
        params = json.loads(params) if isinstance(params, str) else (params or {})
        flags = []
        if isinstance(params.get("system_id"), int):
            flags.append(params["system_id"] in demo_systems if params["system_id"] in demo_systems
                         or params["system_id"] in real_systems else None)
        for key in ("system", "system_name", "baseline"):
            name = params.get(key)
            if isinstance(name, str) and (name in demo_names or name in real_names):
                flags.append(name in demo_names)
        if isinstance(params.get("study_id"), int) and params["study_id"] in demo_studies | real_studies:
            flags.append(params["study_id"] in demo_studies)
        flags = [flag for flag in flags if flag is not None]
        if flags and all(flags):
            marked.append(job_id)
    for job_id in marked:
        bind.execute(sa.text("UPDATE jobs SET is_demo = :yes WHERE id = :id"), {"yes": True, "id": job_id})


def downgrade():
    with op.batch_alter_table('jobs', schema=None) as batch_op:
        batch_op.drop_column('is_demo')
