"""Change counters (services/data_versions): a table's version is the sum of its counter rows."""
from __future__ import annotations

from sqlalchemy import delete, select

from app.extensions import db
from app.models import DataVersion
from app.services.data_versions import SHARD_MARK, current_versions, note_written


def test_a_version_is_the_sum_of_the_tables_rows_including_one_from_before_the_rows_were_spread(app):
    with app.app_context():
        db.session.execute(delete(DataVersion))
        db.session.add_all([DataVersion(table_name="scores", version=5),
                            DataVersion(table_name=f"scores{SHARD_MARK}3", version=2),
                            DataVersion(table_name=f"jobs{SHARD_MARK}0", version=1)])
        db.session.commit()
        assert current_versions() == (("jobs", 1), ("scores", 7))


def test_each_commit_adds_one_and_concurrent_commits_need_not_share_a_row(app):
    with app.app_context():
        before = dict(current_versions()).get("scores", 0)
        commits = 64
        for _ in range(commits):
            note_written("scores", "systems")
            db.session.commit()
        versions = dict(current_versions())
        assert versions["scores"] == before + commits and versions["systems"] >= commits
        rows = db.session.scalars(select(DataVersion.table_name).where(
            DataVersion.table_name.like(f"scores{SHARD_MARK}%"))).all()
    # Rows are picked at random: 64 commits all on one of 16 rows would be a 16**-63 chance.
    assert len(rows) > 1
