"""Generation's API key belongs to a named endpoint an admin configured

Revision ID: d1e4a7c2b9f0
Revises: 118180ca1003
Create Date: 2026-11-26 13:30:00.000000

Generation kept one key (`generate.api_key`) and sent it to whatever base URL a run named. Keys
now belong to named endpoints (`endpoint.<name>.base_url|api_key|api_key_origin`) and go only to
their origin. The old key becomes the endpoint "generation" at the base URL of the newest run an
admin started, the only address it was surely meant for; with no such run it is dropped, since no
address can be trusted with it (an admin enters it again under Generate → Endpoints).
"""
import json
from urllib.parse import urlsplit

from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = 'd1e4a7c2b9f0'
down_revision = '118180ca1003'
branch_labels = None
depends_on = None

settings = sa.table("settings", sa.column("key", sa.String), sa.column("value", sa.Text),
                    sa.column("updated_at", sa.DateTime(timezone=True)))


def _origin(base_url):
    # Frozen copy of the endpoint-origin rule as it stood at this revision (migrations never import the app).
    parts = urlsplit(base_url.strip())
    scheme = parts.scheme.lower()
    try:
        port = parts.port
    except ValueError:
        port = None
    return f"{scheme}://{(parts.hostname or '').lower()}:{port or {'http': 80, 'https': 443}.get(scheme, '')}"


def upgrade():
    bind = op.get_bind()
    key = bind.execute(sa.text("SELECT value FROM settings WHERE key = 'generate.api_key'")).scalar()
    bind.execute(sa.text("DELETE FROM settings WHERE key = 'generate.api_key'"))
    if not key:
        return
    row = bind.execute(sa.text(
        "SELECT generation_runs.spec FROM generation_runs JOIN users ON users.id = generation_runs.created_by_id "
        "WHERE users.role = 'admin' ORDER BY generation_runs.id DESC LIMIT 1")).first()
    spec = row[0] if row else None
    if isinstance(spec, str):
        spec = json.loads(spec)
    base_url = (spec or {}).get("base_url") or ""
    if not base_url.startswith(("http://", "https://")):
        return
    taken = bind.execute(sa.text("SELECT count(*) FROM settings WHERE key LIKE 'endpoint.generation.%'")).scalar()
    if taken:
        return
    now = sa.func.now()
    for field, value in (("base_url", base_url), ("api_key", key), ("api_key_origin", _origin(base_url))):
        bind.execute(settings.insert().values(key=f"endpoint.generation.{field}", value=value, updated_at=now))


def downgrade():
    # The unbound key is not brought back: sending it anywhere a run names is the hole this closed.
    op.get_bind().execute(sa.text("DELETE FROM settings WHERE key LIKE 'endpoint.%'"))
