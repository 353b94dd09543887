"""The question set `study:` takes a study's id only: stored runs that named a study by name keep their study

Revision ID: c9e4b1d7a3f2
Revises: b3d9f2a6c8e1
Create Date: 2026-11-28 18:30:00.000000

`study:<text>` was read as an id when the text was digits naming a study, else as a study's exact
name, so a study named "12" stood behind the study whose id is 12. It now takes an id only. A
generation run reads its set again to resume and to write its `.pred.jsonl`, so every stored
`study:<name>` becomes `study:<id>` of the study the old reading found; a set that found no study
already stays as it was. The schema is unchanged.
"""
import json
import re

from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = 'c9e4b1d7a3f2'
down_revision = 'b3d9f2a6c8e1'
branch_labels = None
depends_on = None

runs = sa.table("generation_runs", sa.column("id", sa.Integer), sa.column("spec", sa.JSON))
studies = sa.table("studies", sa.column("id", sa.Integer), sa.column("name", sa.String))
PREFIX = "study:"


def _old_reading(ref, ids, by_name):
    # Frozen copy of services.question_sets._study_ids before this revision (migrations never import the app).
    if re.fullmatch(r"[0-9]{1,11}", ref) and int(ref) in ids:
        return int(ref)
    return by_name.get(ref)


def upgrade():
    bind = op.get_bind()
    by_name = {}
    for study_id, name in bind.execute(sa.select(studies.c.id, studies.c.name).order_by(studies.c.id)):
        by_name.setdefault(name, study_id)
    ids = set(by_name.values()) | set(bind.execute(sa.select(studies.c.id)).scalars())
    for run_id, spec in bind.execute(sa.select(runs.c.id, runs.c.spec)).all():
        if isinstance(spec, str):
            spec = json.loads(spec)
        chosen = spec.get("question_set") if isinstance(spec, dict) else None
        if not isinstance(chosen, str) or not chosen.startswith(PREFIX):
            continue
        study_id = _old_reading(chosen[len(PREFIX):].strip(), ids, by_name)
        if study_id is not None and chosen != f"{PREFIX}{study_id}":
            bind.execute(runs.update().where(runs.c.id == run_id)
                         .values(spec={**spec, "question_set": f"{PREFIX}{study_id}"}))


def downgrade():
    # `study:<id>` reads the same study before this revision: nothing to undo.
    pass
