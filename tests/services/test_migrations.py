"""The migration chain builds the schema from nothing, and matches the models exactly."""
from __future__ import annotations

import json


import pytest

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from flask_migrate import downgrade, upgrade
from sqlalchemy import inspect, text

from app import create_app
from app.extensions import db
from tests.support.databases import json_value


def make_app(tmp_path):
    return create_app({"INSTANCE_PATH": tmp_path / "instance", "TESTING": True})


def test_upgrade_from_empty_matches_models(tmp_path):
    app = make_app(tmp_path)
    with app.app_context():
        upgrade()
        tables = set(inspect(db.engine).get_table_names())
        assert set(db.metadata.tables) <= tables
        with db.engine.connect() as connection:
            diff = compare_metadata(MigrationContext.configure(connection, opts={"render_as_batch": True}), db.metadata)
        assert diff == [], f"models and migrations differ: {diff}"
        db.engine.dispose()


def test_downgrade_to_base_and_up_again(tmp_path):
    app = make_app(tmp_path)
    with app.app_context():
        upgrade()
        downgrade(revision="base")
        assert set(inspect(db.engine).get_table_names()) <= {"alembic_version"}
        upgrade()
        assert "scores" in inspect(db.engine).get_table_names()
        db.engine.dispose()


@pytest.mark.sqlite_only("PRAGMAs")
def test_sqlite_pragmas_are_on(app):
    with app.app_context():
        with db.engine.connect() as connection:
            assert connection.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
            assert connection.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
            assert connection.exec_driver_sql("PRAGMA busy_timeout").scalar() >= 5000


FIRST_SCHEMA = "c4f5b79a1135"


def seed_first_schema(connection) -> None:
    """Write a scored answer with raw SQL, as a database made by the first schema holds it."""
    now = "2026-01-02 03:04:05.000000"
    for sql in (
        "INSERT INTO users (id, username, password_hash, role, active, created_at) "
        "VALUES (1, 'ann', 'x', 'annotator', TRUE, :now)",
        "INSERT INTO documents (id, collection, task, source, title, text, sha256, word_count, char_count, evaluation, "
        "source_file, line_no, created_at) VALUES (1, 'human_eval', 'news_summ', 'news', 'Doc', 'A long text.', "
        "'abc', 3, 12, 'human', 'ref.jsonl', 1, :now)",
        "INSERT INTO questions (id, document_id, position, instruction, reference, evaluation, match_key, created_at) "
        "VALUES (1, 1, 0, 'What?', 'That.', 'human', 'k', :now)",
        "INSERT INTO systems (id, name, pred_key, length_instruction, in_human_eval, created_at) "
        "VALUES (1, 'model-a', 'model-a_pred', FALSE, TRUE, :now)",
        "INSERT INTO predictions (id, system_id, question_id, line_no, text, evaluation, word_count, created_at) "
        "VALUES (1, 1, 1, 1, 'An answer.', 'human', 2, :now)",
        "INSERT INTO annotation_rounds (id, annotator_id, number, status, started_at) VALUES (1, 1, 1, 'open', :now)",
        "INSERT INTO question_views (id, round_id, question_id, \"order\", first_viewed_at) VALUES (1, 1, 1, '[1]', :now)",
        "INSERT INTO scores (id, round_id, annotator_id, prediction_id, value, comment, answer_label, seconds_spent, "
        "created_at, updated_at) VALUES (1, 1, 1, 1, 4, 'good', 'A', 12.5, :now, :now)",
        "INSERT INTO score_revisions (id, score_id, old_value, new_value, old_comment, new_comment, changed_at) "
        "VALUES (1, 1, NULL, 4, NULL, 'good', :now)",
    ):
        connection.execute(text(sql), {"now": now})


def test_change_counters_arrive_on_a_scored_database(tmp_path):
    app = make_app(tmp_path)
    with app.app_context():
        upgrade(revision=FIRST_SCHEMA)
        with db.engine.begin() as connection:
            seed_first_schema(connection)
        upgrade()
        with db.engine.connect() as connection:
            assert connection.execute(text("SELECT value, comment FROM scores")).all() == [(4, "good")]
            assert connection.execute(text("SELECT count(*) FROM score_revisions")).scalar() == 1
            assert connection.execute(text("SELECT count(*) FROM data_versions")).scalar() == 0
        from app.models import Score
        from app.services.data_versions import current_versions

        db.session.get(Score, 1).comment = "good, complete"
        db.session.commit()
        assert current_versions() == (("scores", 1),)
        db.session.remove()
        db.engine.dispose()


BEFORE_STUDIES = "726da7041022"


def seed_before_studies(connection) -> None:
    """Two annotators' rounds on the old schema: scores, revisions, views; a system left out of human eval."""
    seed_first_schema(connection)
    now = "2026-01-02 03:04:05.000000"
    for sql in (
        "INSERT INTO users (id, username, password_hash, role, active, created_at) "
        "VALUES (2, 'bea', 'x', 'annotator', TRUE, :now)",
        "INSERT INTO systems (id, name, pred_key, length_instruction, in_human_eval, created_at) "
        "VALUES (2, 'model-b', 'model-b_pred', FALSE, TRUE, :now), (3, 'model-c', 'model-c_pred', FALSE, FALSE, :now)",
        "INSERT INTO predictions (id, system_id, question_id, line_no, text, evaluation, word_count, created_at) "
        "VALUES (2, 2, 1, 1, 'Another answer.', 'human', 2, :now), (3, 3, 1, 1, 'A third one.', 'human', 3, :now)",
        "INSERT INTO annotation_rounds (id, annotator_id, number, status, started_at) VALUES "
        "(2, 1, 2, 'open', :now), (3, 2, 1, 'open', :now)",
        "UPDATE annotation_rounds SET status = 'archived' WHERE id = 1",
        "UPDATE question_views SET \"order\" = '[3, 1, 2]' WHERE id = 1",
        "INSERT INTO question_views (id, round_id, question_id, \"order\", first_viewed_at) VALUES "
        "(2, 3, 1, '[2, 3, 1]', :now)",
        "INSERT INTO scores (id, round_id, annotator_id, prediction_id, value, comment, answer_label, seconds_spent, "
        "created_at, updated_at) VALUES (2, 1, 1, 3, 2, 'left out later', 'A', 3.0, :now, :now), "
        "(3, 3, 2, 2, 5, '', 'A', 9.0, :now, :now)",
    ):
        connection.execute(text(sql), {"now": now})


def test_studies_migration_keeps_every_score_round_revision_and_view(tmp_path):
    app = make_app(tmp_path)
    with app.app_context():
        upgrade(revision=BEFORE_STUDIES)
        with db.engine.begin() as connection:
            seed_before_studies(connection)
        upgrade()
        with db.engine.connect() as connection:
            q = lambda sql: connection.execute(text(sql)).all()  # noqa: E731
            assert q("SELECT name, status, is_demo, overlap FROM studies") == [("L-Eval human evaluation", "open", 0, None)]
            assert q("SELECT count(*) FROM score_revisions") == [(1,)]
            assert q("SELECT count(*), count(DISTINCT study_id) FROM annotation_rounds") == [(3, 1)]
            assert q("SELECT id, number, status FROM annotation_rounds ORDER BY id") == [
                (1, 1, "archived"), (2, 2, "open"), (3, 1, "open")]
            # Every score points at version 1 of the text it was given for, with that text's hash.
            scores = q("SELECT s.id, s.value, s.comment, a.text, a.version, s.answer_sha256 = a.sha256 FROM scores s "
                       "JOIN answers a ON a.id = s.answer_id ORDER BY s.id")
            assert scores == [(1, 4, "good", "An answer.", 1, 1), (2, 2, "left out later", "A third one.", 1, 1),
                              (3, 5, "", "Another answer.", 1, 1)]
            # Systems chosen for human evaluation are the study's; the other keeps its slot, not shown.
            assert q("SELECT system_id FROM study_systems ORDER BY system_id") == [(1,), (2,)]
            assert q("SELECT system_id, excluded FROM study_answers ORDER BY system_id") == [(1, 0), (2, 0), (3, 1)]
            # Views list the same answers, in the same order, as slots.
            slots = dict(q("SELECT sa.id, a.prediction_id FROM study_answers sa JOIN answers a ON a.id = sa.answer_id"))
            orders = [json_value(order) for (order,) in q('SELECT "order" FROM question_views ORDER BY id')]
            assert [[slots[slot] for slot in order] for order in orders] == [[3, 1, 2], [2, 3, 1]]
            assert q("SELECT count(*) FROM predictions WHERE text_sha256 = ''") == [(0,)]
        downgrade(revision=BEFORE_STUDIES)
        with db.engine.connect() as connection:
            assert connection.execute(text("SELECT id, prediction_id, value FROM scores ORDER BY id")).all() == [
                (1, 1, 4), (2, 3, 2), (3, 2, 5)]
            orders = connection.execute(text('SELECT "order" FROM question_views ORDER BY id')).scalars().all()
            assert [json_value(order) for order in orders] == [[3, 1, 2], [2, 3, 1]]


GENERATION_SCHEMA = "f87bdea9abc2"


def test_generation_tables_arrive_on_a_scored_database_and_leave_it_as_it_was(tmp_path):
    app = make_app(tmp_path)
    with app.app_context():
        upgrade(revision=FIRST_SCHEMA)
        with db.engine.begin() as connection:
            seed_first_schema(connection)
        upgrade(revision=GENERATION_SCHEMA)
        with db.engine.begin() as connection:
            assert connection.execute(text("SELECT value, comment FROM scores")).all() == [(4, "good")]
            assert connection.execute(text("SELECT text FROM predictions")).all() == [("An answer.",)]
            connection.execute(text(
                "INSERT INTO authored_pairs (document_id, instruction, answer, evidence, version, author_name, "
                "created_at, updated_by_name) VALUES (1, 'Q?', 'A.', '[]', 1, 'ann', '2026-01-02', '')"))
        downgrade(revision="f52a420a9770")  # the schema that comes before
        tables = set(inspect(db.engine).get_table_names())
        assert not tables & {"authored_pairs", "generation_runs", "generation_calls", "generation_prompts"}
        with db.engine.connect() as connection:
            assert connection.execute(text("SELECT value, comment FROM scores")).all() == [(4, "good")]
        upgrade()
        db.session.remove()
        db.engine.dispose()


def test_metric_scopes_arrive_on_a_scored_database(tmp_path):
    """Stored per-row values stay; those of rows auto_eval.py does not count become analysis values."""
    app = make_app(tmp_path)
    with app.app_context():
        upgrade(revision="726da7041022")
        with db.engine.begin() as connection:
            seed_first_schema(connection)
            now = "2026-01-02 03:04:05.000000"
            connection.execute(text(
                "INSERT INTO questions (id, document_id, position, instruction, reference, evaluation, match_key, "
                "created_at) VALUES (2, 1, 1, 'Why?', 'This.', 'f1', 'k2', :now), "
                "(3, 1, 2, 'How?', 'So.', 'f1', 'k3', :now)"), {"now": now})
            connection.execute(text(
                "INSERT INTO predictions (id, system_id, question_id, line_no, text, evaluation, word_count, "
                "created_at) VALUES (2, 1, 2, 2, 'This.', 'f1', 1, :now), (3, 1, 3, 3, 'So.', 'F1', 1, :now)"),
                {"now": now})
            for pid in (1, 2, 3):
                for profile in ("official", "fixed"):
                    connection.execute(text(
                        "INSERT INTO metric_results (prediction_id, system_id, question_id, metric, profile, value, "
                        "computed_at) VALUES (:pid, 1, :pid, 'f1', :profile, 50.0, :now)"),
                        {"pid": pid, "profile": profile, "now": now})
        upgrade()
        with db.engine.connect() as connection:
            rows = connection.execute(text(
                "SELECT prediction_id, profile, scope, value FROM metric_results ORDER BY prediction_id, profile")).all()
        assert rows == [(1, "fixed", "analysis", 50.0), (1, "official", "analysis", 50.0),
                        (2, "fixed", "counted", 50.0), (2, "official", "counted", 50.0),
                        (3, "fixed", "counted", 50.0), (3, "official", "analysis", 50.0)]
        db.engine.dispose()


def test_judge_prompt_rename_and_rater_tables_keep_a_scored_database(tmp_path):
    """The default judge prompt is renamed in place (same id and text); the rater's tables arrive empty."""
    app = make_app(tmp_path)
    with app.app_context():
        upgrade(revision=FIRST_SCHEMA)
        with db.engine.begin() as connection:
            seed_first_schema(connection)
            connection.execute(text(
                "INSERT INTO judge_prompts (id, name, version, system_text, user_template, created_at) VALUES "
                "(7, 'leval-pairwise', 1, 'Judge.', '{question}', :now), (8, 'leval-pairwise', 2, 'Judge!', "
                "'{question}', :now), (9, 'my-prompt', 1, 'Mine.', '{question}', :now)"),
                {"now": "2026-01-02 03:04:05.000000"})

        def prompts():
            with db.engine.connect() as connection:
                return connection.execute(text(
                    "SELECT id, name, version, system_text FROM judge_prompts ORDER BY id")).all()

        def score_count():
            with db.engine.connect() as connection:
                return connection.execute(text("SELECT COUNT(*) FROM scores")).scalar()

        upgrade()
        assert prompts() == [(7, "studio-pairwise", 1, "Judge."), (8, "studio-pairwise", 2, "Judge!"),
                             (9, "my-prompt", 1, "Mine.")]
        tables = set(inspect(db.engine).get_table_names())
        assert {"rater_prompts", "llm_ratings"} <= tables and score_count() == 1
        with db.engine.connect() as connection:
            assert connection.execute(text("SELECT COUNT(*) FROM llm_ratings")).scalar() == 0
        downgrade(revision="a6269316429d")
        assert [name for _, name, _, _ in prompts()] == ["leval-pairwise", "leval-pairwise", "my-prompt"]
        assert not {"rater_prompts", "llm_ratings"} & set(inspect(db.engine).get_table_names())
        assert score_count() == 1
        db.engine.dispose()


BEFORE_SESSION_VERSIONS = "a04a56f377e6"


def test_session_versions_arrive_on_a_database_with_scores(tmp_path):
    app = make_app(tmp_path)
    with app.app_context():
        upgrade(revision=BEFORE_STUDIES)
        with db.engine.begin() as connection:
            seed_before_studies(connection)
        upgrade(revision=BEFORE_SESSION_VERSIONS)
        upgrade()
        with db.engine.connect() as connection:
            q = lambda sql: connection.execute(text(sql)).all()  # noqa: E731
            assert q("SELECT id, username, session_version FROM users ORDER BY id") == [(1, "ann", 0), (2, "bea", 0)]
            assert q("SELECT count(*) FROM scores") == [(3,)] and q("SELECT count(*) FROM login_attempts") == [(0,)]
        downgrade(revision=BEFORE_SESSION_VERSIONS)
        with db.engine.connect() as connection:
            assert connection.execute(text("SELECT username FROM users ORDER BY id")).scalars().all() == ["ann", "bea"]
            assert "login_attempts" not in inspect(db.engine).get_table_names()
        db.engine.dispose()


BEFORE_LVEVAL = "541eb1da45da"


def test_leaderboard_keys_and_lveval_items_arrive_on_a_database_with_data(tmp_path):
    app = make_app(tmp_path)
    with app.app_context():
        upgrade(revision=FIRST_SCHEMA)
        with db.engine.begin() as connection:
            seed_first_schema(connection)
        upgrade()
        with db.engine.connect() as connection:
            row = connection.execute(text(
                "SELECT name, context_window, input_tokens, retrieval, prompt_engineering, in_domain_data, parameters, "
                "links, variant_of_id, variant_kind FROM systems")).one()
            assert tuple(row) == ("model-a", None, None, None, None, None, "", "", None, "")
            assert connection.execute(text("SELECT value FROM scores")).scalar() == 4
            assert connection.execute(text("SELECT count(*) FROM lveval_items")).scalar() == 0
        from app.models import LvevalItem, System

        system = db.session.get(System, 1)
        system.context_window, system.parameters = 32768, "6B"
        db.session.add(LvevalItem(question_id=1, dataset="cmrc_mixup", level="16k", answers='["That."]'))
        db.session.commit()
        downgrade(revision=BEFORE_LVEVAL)
        with db.engine.connect() as connection:
            assert connection.execute(text("SELECT name FROM systems")).scalar() == "model-a"
            assert "lveval_items" not in inspect(db.engine).get_table_names()
        db.session.remove()
        db.engine.dispose()


BEFORE_TITLES = "f87bdea9abc2"


def test_document_titles_are_rederived_and_everything_else_kept(tmp_path):
    from datetime import datetime

    from sqlalchemy import MetaData, Table, insert

    app = make_app(tmp_path)
    with app.app_context():
        upgrade(revision=FIRST_SCHEMA)
        with db.engine.begin() as connection:
            seed_first_schema(connection)  # document 1: 'news_summ', titled "Doc" by hand
        upgrade(revision=BEFORE_TITLES)
        turns = "Chair B: Shall we start?\nMember C: Yes.\n" + "Member C: More talk.\n" * 3000
        call = "Good morning, and welcome to the Acme Widgets Third Quarter 2031 Earnings Call. Lines are muted."
        with db.engine.begin() as connection:
            documents = Table("documents", MetaData(), autoload_with=connection)
            common = {"source": "", "sha256": "", "word_count": 1, "char_count": 1, "evaluation": "human",
                      "source_file": "ref.jsonl", "line_no": 1, "is_demo": False, "created_at": datetime(2026, 1, 2, 3, 4, 5)}
            for id_, collection, task, title, text_ in (
                (2, "human_eval", "meeting_summ", "Chair B: Shall we start?", turns),
                (3, "human_eval", "meeting_summ", "Chair B: Shall we go?", turns.replace("start", "go")),
                (4, "human_eval", "financial", call[:90].rsplit(" ", 1)[0] + "…", call),
                (5, "lveval", "factrecall_en", "LV-Eval factrecall_en, 16k", "Who founded it?"),
                (6, "authored", "financial", call[:90].rsplit(" ", 1)[0] + "…", call),
            ):
                connection.execute(insert(documents).values(
                    id=id_, collection=collection, task=task, title=title, text=text_, **{**common, "sha256": str(len(text_))}))
        upgrade()
        with db.engine.connect() as connection:
            titles = dict(connection.execute(text("SELECT id, title FROM documents ORDER BY id")).all())
            assert titles == {
                1: "Doc",  # not made by the old rule: left alone
                2: "meeting_summ · document 1", 3: "meeting_summ · document 2",
                4: "Acme Widgets Third Quarter 2031 Earnings Call",
                5: "LV-Eval factrecall_en, 16k",
                6: "Acme Widgets Third Quarter 2031 Earnings Call",
            }
            assert connection.execute(text("SELECT value, comment FROM scores")).one() == (4, "good")
            assert connection.execute(text("SELECT count(*) FROM questions")).scalar() == 1
        downgrade(revision=BEFORE_TITLES)
        with db.engine.connect() as connection:
            titles = dict(connection.execute(text("SELECT id, title FROM documents ORDER BY id")).all())
            assert (titles[1], titles[2], titles[3]) == ("Doc", "Chair B: Shall we start?", "Chair B: Shall we go?")
            assert titles[4] == titles[6] == call[:90].rsplit(" ", 1)[0] + "…" and titles[5].startswith("LV-Eval")
        db.engine.dispose()


BEFORE_UPLOAD_BATCHES = "050d3a358bfb"


def test_confirmed_uploads_and_long_answer_flags_arrive_on_a_database_with_data(tmp_path):
    app = make_app(tmp_path)
    with app.app_context():
        upgrade(revision=FIRST_SCHEMA)
        with db.engine.begin() as connection:
            seed_first_schema(connection)
        upgrade(revision=BEFORE_UPLOAD_BATCHES)
        with db.engine.begin() as connection:
            connection.execute(text(
                "INSERT INTO questions (id, document_id, position, instruction, reference, evaluation, match_key, "
                "created_at) SELECT 2, 1, 1, 'Why?', 'So.', 'human', 'k2', created_at FROM questions WHERE id = 1"))
            connection.execute(text(
                "INSERT INTO predictions (id, system_id, question_id, line_no, text, text_sha256, evaluation, word_count, "
                "created_at) SELECT 2, 1, 2, 2, :long, '', 'human', 1, created_at FROM predictions WHERE id = 1"),
                {"long": "x" * 100_001})
        upgrade()
        with db.engine.connect() as connection:
            q = lambda sql: connection.execute(text(sql)).all()  # noqa: E731
            assert q("SELECT id, long_answer, length(text) FROM predictions ORDER BY id") == [
                (1, "", 10), (2, "shown", 100_001)]
            assert q("SELECT count(*) FROM upload_batches") == [(0,)]
            assert q("SELECT value, comment FROM scores") == [(4, "good")]
        from app.models import UploadBatch

        db.session.add(UploadBatch(id="a" * 32, user_id=1, files=1, predictions=2, systems="model-a"))
        db.session.commit()
        downgrade(revision=BEFORE_UPLOAD_BATCHES)
        with db.engine.connect() as connection:
            assert "upload_batches" not in inspect(db.engine).get_table_names()
            assert "long_answer" not in {c["name"] for c in inspect(db.engine).get_columns("predictions")}
            assert connection.execute(text("SELECT count(*) FROM predictions")).scalar() == 2
            assert connection.execute(text("SELECT value FROM scores")).scalar() == 4
        db.engine.dispose()


BEFORE_QUEUE = "3c8e1f0a7b52"
QUEUE_SCHEMA = "118180ca1003"


def test_queue_tables_arrive_on_a_scored_database_and_leave_it_as_it_was(tmp_path):
    app = make_app(tmp_path)
    with app.app_context():
        upgrade(revision=FIRST_SCHEMA)
        with db.engine.begin() as connection:
            seed_first_schema(connection)
        upgrade(revision=QUEUE_SCHEMA)
        with db.engine.begin() as connection:
            assert connection.execute(text("SELECT value, comment FROM scores")).all() == [(4, "good")]
            connection.execute(text("INSERT INTO queue_tasks (queue, data, priority) VALUES ('leval', :d, 0)"),
                               {"d": b"task"})
        downgrade(revision=BEFORE_QUEUE)
        assert not set(inspect(db.engine).get_table_names()) & {"queue_tasks", "queue_schedule", "queue_values",
                                                                "queue_counters"}
        with db.engine.connect() as connection:
            assert connection.execute(text("SELECT value, comment FROM scores")).all() == [(4, "good")]
        upgrade()
        db.session.remove()
        db.engine.dispose()


BEFORE_NAMED_ENDPOINTS = "118180ca1003"


@pytest.mark.parametrize("admin_ran, expected", [
    (True, {"endpoint.generation.base_url": "http://127.0.0.1:8001/v1",
            "endpoint.generation.api_key": "sk-old-generation-key-000",
            "endpoint.generation.api_key_origin": "http://127.0.0.1:8001"}),
    (False, {}),
])
def test_the_old_generation_key_is_bound_to_an_admins_endpoint_or_dropped(tmp_path, admin_ran, expected):
    """The unbound key keeps only the address an admin's newest run used; a researcher's run binds nothing."""
    app = make_app(tmp_path)
    with app.app_context():
        upgrade(revision=FIRST_SCHEMA)
        with db.engine.begin() as connection:
            seed_first_schema(connection)
        upgrade(revision=BEFORE_NAMED_ENDPOINTS)
        with db.engine.begin() as connection:
            now = "2026-01-02 03:04:05.000000"
            connection.execute(text("INSERT INTO users (id, username, password_hash, role, active, created_at) "
                                    "VALUES (2, 'boss', 'x', :role, TRUE, :now), (3, 'res', 'x', 'researcher', TRUE, :now)"),
                               {"now": now, "role": "admin" if admin_ran else "researcher"})
            for run_id, user_id, url in ((1, 2, "http://127.0.0.1:8001/v1"), (2, 3, "http://evil.example:9/v1")):
                connection.execute(text(
                    "INSERT INTO generation_runs (id, system_name, spec, manifest, questions, answered, created_by_id, "
                    "created_at) VALUES (:id, 's', :spec, '{}', 0, 0, :user, :now)"),
                    {"id": run_id, "user": user_id, "now": now, "spec": '{"base_url": "%s"}' % url})
            connection.execute(text("INSERT INTO settings (key, value, updated_at) VALUES "
                                    "('generate.api_key', 'sk-old-generation-key-000', :now), ('judge.model', 'gpt-4', :now)"),
                               {"now": now})
        upgrade()
        with db.engine.connect() as connection:
            rows = dict(connection.execute(text("SELECT key, value FROM settings")).all())
            assert rows == {"judge.model": "gpt-4", **expected}
            assert connection.execute(text("SELECT value, comment FROM scores")).one() == (4, "good")
            assert connection.execute(text("SELECT count(*) FROM generation_runs")).scalar() == 2
        db.engine.dispose()


BEFORE_EVERYONE_CHOICE = "d1e4a7c2b9f0"


def test_every_account_may_score_follows_each_studys_list_on_a_database_with_scores(tmp_path):
    """A study listing nobody stays open to every account; one listing annotators stays theirs; rows are kept.

    Going back, a restricted study that lists nobody is closed rather than opened to everyone.
    """
    app = make_app(tmp_path)
    with app.app_context():
        upgrade(revision=BEFORE_STUDIES)
        with db.engine.begin() as connection:
            seed_before_studies(connection)  # the studies migration makes "L-Eval human evaluation" of it
        upgrade(revision=BEFORE_EVERYONE_CHOICE)
        with db.engine.begin() as connection:
            connection.execute(text(
                "INSERT INTO studies (id, name, description, status, reference_kinds, reference_policy, is_demo, "
                "references_checked, created_at) SELECT 2, 'Restricted', '', 'open', reference_kinds, "
                "reference_policy, is_demo, references_checked, created_at FROM studies WHERE id = 1"))
            connection.execute(text("INSERT INTO study_annotators (study_id, user_id) VALUES (2, 2)"))
        upgrade()
        with db.engine.connect() as connection:
            q = lambda sql: [tuple(row) for row in connection.execute(text(sql)).all()]  # noqa: E731
            assert [(name, bool(everyone)) for name, everyone in q(
                "SELECT name, everyone_may_score FROM studies ORDER BY id")] == [
                ("L-Eval human evaluation", True), ("Restricted", False)]
            assert q("SELECT study_id, user_id FROM study_annotators") == [(2, 2)]
            assert q("SELECT count(*) FROM scores") == [(3,)] and q("SELECT count(*) FROM annotation_rounds") == [(3,)]
        with db.engine.begin() as connection:  # the list emptied by hand: open to nobody, and closed going back
            connection.execute(text("DELETE FROM study_annotators"))
        downgrade(revision=BEFORE_EVERYONE_CHOICE)
        with db.engine.connect() as connection:
            assert "everyone_may_score" not in {c["name"] for c in inspect(db.engine).get_columns("studies")}
            assert connection.execute(text("SELECT name, status FROM studies ORDER BY id")).all() == [
                ("L-Eval human evaluation", "open"), ("Restricted", "closed")]
            assert connection.execute(text("SELECT count(*) FROM scores")).scalar() == 3


BEFORE_OWN_GOLD = "5ef2015c45bb"


def test_lveval_predictions_take_their_question_s_gold_ans_and_keep_everything_else(tmp_path):
    """The new per-prediction gold_ans starts as the one each prediction was scored with; nothing else moves."""
    app = make_app(tmp_path)
    with app.app_context():
        upgrade(revision=FIRST_SCHEMA)
        with db.engine.begin() as connection:
            seed_first_schema(connection)
        upgrade(revision=BEFORE_OWN_GOLD)
        with db.engine.begin() as connection:
            now = "2026-01-02 03:04:05.000000"
            for sql in (
                "INSERT INTO documents (id, collection, task, source, title, text, sha256, word_count, char_count, "
                "evaluation, source_file, line_no, created_at, is_demo) VALUES (2, 'lveval', 'lic_mixup_16k', "
                "'lic_mixup', 'LV-Eval lic_mixup, 16k', '', 'def', 0, 0, 'lveval', 'lic_mixup_16k.jsonl', 0, :now, FALSE)",
                "INSERT INTO questions (id, document_id, position, instruction, reference, evaluation, match_key, "
                "created_at) VALUES (2, 2, 0, '谁？', '林远舟', 'lveval', 'k2', :now), "
                "(3, 2, 1, '哪里？', '北京', 'lveval', 'k3', :now)",
                "INSERT INTO lveval_items (question_id, dataset, level, occurrence, answers, gold_ans) VALUES "
                "(2, 'lic_mixup', '16k', 0, '[\"林远舟\"]', '林远舟 船长'), (3, 'lic_mixup', '16k', 0, '[\"北京\"]', NULL)",
                "INSERT INTO predictions (id, system_id, question_id, line_no, text, evaluation, word_count, created_at, "
                "text_sha256) VALUES (4, 1, 2, 1, '林远舟', 'lveval', 1, :now, ''), (5, 1, 3, 2, '北京', 'lveval', 1, :now, '')",
            ):
                connection.execute(text(sql), {"now": now})
        upgrade()
        with db.engine.connect() as connection:
            rows = connection.execute(text("SELECT id, text, gold_ans FROM predictions ORDER BY id")).all()
            assert [tuple(row) for row in rows] == [(1, "An answer.", None), (4, "林远舟", "林远舟 船长"),
                                                     (5, "北京", None)]
            assert connection.execute(text("SELECT value, comment FROM scores")).one() == (4, "good")
            assert connection.execute(text("SELECT gold_ans FROM lveval_items ORDER BY question_id")).scalars().all() \
                == ["林远舟 船长", None]
        downgrade(revision=BEFORE_OWN_GOLD)
        assert "gold_ans" not in {c["name"] for c in inspect(db.engine).get_columns("predictions")}
        with db.engine.connect() as connection:
            assert connection.execute(text("SELECT count(*) FROM predictions")).scalar() == 3
            assert connection.execute(text("SELECT value, comment FROM scores")).one() == (4, "good")
        upgrade()
        db.session.remove()
        db.engine.dispose()


BEFORE_JOB_DEMO_MARK = "e3a9c2d41b76"


def test_jobs_take_the_demo_mark_of_their_system_or_study(tmp_path):
    """A job about the demo's system is marked demo; a job about a real one, or about nothing, is not; rows stay."""
    app = make_app(tmp_path)
    with app.app_context():
        upgrade(revision=FIRST_SCHEMA)
        with db.engine.begin() as connection:
            seed_first_schema(connection)  # system 1, model-a: real
        upgrade(revision=BEFORE_JOB_DEMO_MARK)
        with db.engine.begin() as connection:
            now = "2026-01-02 03:04:05.000000"
            connection.execute(text("INSERT INTO systems (id, name, pred_key, length_instruction, is_demo, variant_kind, "
                                    "created_at) SELECT 2, 'demo-b', 'demo-b_pred', length_instruction, TRUE, "
                                    "variant_kind, created_at FROM systems WHERE id = 1"))
            for job_id, params in ((1, '{"system_id": 2, "system": "demo-b"}'), (2, '{"system_id": 1, "system": "model-a"}'),
                                   (3, '{"system": "demo-b", "baseline": "model-a"}'), (4, '{"system": "demo-b", "baseline": "demo-b"}'),
                                   (5, '{}')):
                connection.execute(text("INSERT INTO jobs (id, kind, params, params_hash, status, done, total, message, "
                                        "cancel_requested, attempts, created_at) VALUES (:id, 'metrics', :params, :h, "
                                        "'done', 0, 0, '', FALSE, 0, :now)"),
                                   {"id": job_id, "params": params, "h": str(job_id), "now": now})
        upgrade()
        with db.engine.connect() as connection:
            marks = {job_id: bool(flag) for job_id, flag in connection.execute(text("SELECT id, is_demo FROM jobs"))}
            assert marks == {1: True, 2: False, 3: False, 4: True, 5: False}
            assert connection.execute(text("SELECT value FROM scores")).scalar() == 4
        downgrade(revision=BEFORE_JOB_DEMO_MARK)
        assert "is_demo" not in {c["name"] for c in inspect(db.engine).get_columns("jobs")}
        db.engine.dispose()


BEFORE_CLEARS = "9e3b5c71d2a4"


def test_clearable_scores_arrive_on_a_scored_database_and_keep_the_1_to_5_rule(tmp_path):
    """Scores and revisions are kept; a score may now have no value (cleared) but never one outside 1–5;
    going back drops what the old schema cannot hold (a cleared score) and keeps the rest."""
    app = make_app(tmp_path)
    with app.app_context():
        upgrade(revision=FIRST_SCHEMA)
        with db.engine.begin() as connection:
            seed_first_schema(connection)
        upgrade(revision=BEFORE_CLEARS)
        upgrade()
        now = "2026-01-03 03:04:05.000000"
        with db.engine.begin() as connection:
            assert connection.execute(text("SELECT value, comment FROM scores")).one() == (4, "good")
            assert connection.execute(text("SELECT old_value, new_value FROM score_revisions")).one() == (None, 4)
            connection.execute(text("UPDATE scores SET value = NULL WHERE id = 1"))  # cleared
            connection.execute(text(
                "INSERT INTO score_revisions (id, score_id, old_value, new_value, old_comment, new_comment, "
                "changed_at) VALUES (2, 1, 4, NULL, 'good', 'good', :now)"), {"now": now})
        with pytest.raises(Exception, match="(?i)check"):
            with db.engine.begin() as connection:
                connection.execute(text("UPDATE scores SET value = 6 WHERE id = 1"))
        with db.engine.connect() as connection:
            assert connection.execute(text("SELECT value FROM scores")).one() == (None,)
            assert connection.execute(text("SELECT count(*) FROM score_revisions")).scalar() == 2
        downgrade(revision=BEFORE_CLEARS)
        with db.engine.connect() as connection:
            assert connection.execute(text("SELECT count(*) FROM scores")).scalar() == 0
            assert connection.execute(text("SELECT count(*) FROM score_revisions")).scalar() == 0
            assert connection.execute(text("SELECT count(*) FROM question_views")).scalar() == 1
        upgrade()
        db.session.remove()
        db.engine.dispose()


BEFORE_API_TOKENS = "a8c3f1d6e2b7"


def test_api_tokens_arrive_on_a_scored_database_and_leave_it_as_it_was(tmp_path):
    """The token table is new: a scored database keeps every row, takes tokens, and going back drops only them."""
    app = make_app(tmp_path)
    with app.app_context():
        upgrade(revision=FIRST_SCHEMA)
        with db.engine.begin() as connection:
            seed_first_schema(connection)
        upgrade(revision=BEFORE_API_TOKENS)
        upgrade()
        with db.engine.begin() as connection:
            assert connection.execute(text("SELECT value, comment FROM scores")).one() == (4, "good")
            connection.execute(text(
                "INSERT INTO api_tokens (user_id, name, token_hash, prefix, scope, created_at) "
                "VALUES (1, 'cluster', :hash, 'lvs_abcdefgh', 'read', '2026-01-03 00:00:00')"), {"hash": "a" * 64})
        with pytest.raises(Exception, match="(?i)check"):
            with db.engine.begin() as connection:
                connection.execute(text("UPDATE api_tokens SET scope = 'admin'"))
        downgrade(revision=BEFORE_API_TOKENS)
        assert "api_tokens" not in inspect(db.engine).get_table_names()
        with db.engine.connect() as connection:
            assert connection.execute(text("SELECT username FROM users")).scalars().all() == ["ann"]
            assert connection.execute(text("SELECT value FROM scores")).scalars().all() == [4]
        upgrade()
        db.engine.dispose()


BEFORE_EVIDENCE = "b7d2e9f4a1c3"  # the API tokens' migration


def test_ratings_and_judgments_take_an_evidence_column_and_keep_their_rows(tmp_path):
    """Existing ratings and judgments stay as they were with no evidence; quotes stored after survive a round trip."""
    app = make_app(tmp_path)
    with app.app_context():
        upgrade(revision=FIRST_SCHEMA)
        with db.engine.begin() as connection:
            seed_first_schema(connection)
        upgrade(revision=BEFORE_EVIDENCE)
        now = "2026-01-02 03:04:05.000000"
        with db.engine.begin() as connection:
            connection.execute(text("INSERT INTO llm_ratings (id, cache_key, rater_model, temperature, score, raw_reply, "
                                    "prompt_tokens, completion_tokens, latency_ms, created_at) VALUES "
                                    "(1, 'k1', 'gpt-4', 0, 4, '[[4]]', 10, 2, 1.5, :now)"), {"now": now})
            connection.execute(text("INSERT INTO llm_judgments (id, cache_key, \"order\", judge_model, temperature, "
                                    "verdict, raw_reply, prompt_tokens, completion_tokens, latency_ms, created_at) "
                                    "VALUES (1, 'j1', 'AB', 'gpt-4', 0, 'A', '[[A]]', 10, 2, 1.5, :now)"), {"now": now})
        upgrade()
        quotes = {"document_id": 1, "quotes": [{"answer": "", "stance": "supports", "quote": "x",
                                                "status": "exact", "start": 0, "end": 1, "reason": "found"}]}
        with db.engine.begin() as connection:
            assert connection.execute(text("SELECT score, raw_reply, evidence FROM llm_ratings")).one() == (4, "[[4]]", None)
            assert connection.execute(text("SELECT verdict, evidence FROM llm_judgments")).one() == ("A", None)
            connection.execute(text("UPDATE llm_ratings SET evidence = :e"), {"e": json.dumps(quotes)})
            stored = connection.execute(text("SELECT evidence FROM llm_ratings")).scalar()
            assert json_value(stored) == quotes
            assert connection.execute(text("SELECT value FROM scores")).scalar() == 4
        downgrade(revision=BEFORE_EVIDENCE)
        for table in ("llm_ratings", "llm_judgments"):
            assert "evidence" not in {c["name"] for c in inspect(db.engine).get_columns(table)}
        with db.engine.connect() as connection:
            assert connection.execute(text("SELECT score FROM llm_ratings")).scalar() == 4
        db.engine.dispose()


BEFORE_ALLOCATION = "b7e2d94c1f35"  # the evidence column's migration


def test_allocation_policy_arrives_on_a_scored_database_and_leaves_it_as_it_was(tmp_path):
    """Existing studies become fixed (their overlap kept); scores, rounds and views stay; going back keeps them too."""
    app = make_app(tmp_path)
    with app.app_context():
        upgrade(revision=BEFORE_STUDIES)
        with db.engine.begin() as connection:
            seed_before_studies(connection)
        upgrade(revision=BEFORE_ALLOCATION)
        with db.engine.connect() as connection:
            before = connection.execute(text("SELECT id, answer_id, value FROM scores ORDER BY id")).all()
        upgrade()
        with db.engine.begin() as connection:
            q = lambda sql: connection.execute(text(sql)).all()  # noqa: E731
            assert q("SELECT name, overlap, allocation, budget_documents, tie_margin FROM studies") == [
                ("L-Eval human evaluation", None, "fixed", None, None)]
            assert q("SELECT id, answer_id, value FROM scores ORDER BY id") == before
            assert q("SELECT count(*) FROM study_allocations") == [(0,)]
            slot, question, document = q("SELECT sa.id, sa.question_id, qu.document_id FROM study_answers sa "
                                         "JOIN questions qu ON qu.id = sa.question_id ORDER BY sa.id")[0]
            connection.execute(text(
                "INSERT INTO study_allocations (study_id, user_id, study_answer_id, question_id, document_id, step, "
                "created_at) VALUES (1, 1, :slot, :q, :d, 1, '2026-01-04 00:00:00')"),
                {"slot": slot, "q": question, "d": document})
        downgrade(revision=BEFORE_ALLOCATION)
        with db.engine.connect() as connection:
            assert connection.execute(text("SELECT id, answer_id, value FROM scores ORDER BY id")).all() == before
            assert "study_allocations" not in inspect(db.engine).get_table_names()
            assert connection.execute(text("SELECT count(*) FROM question_views")).scalar() == 2
        db.session.remove()
        db.engine.dispose()


BEFORE_SHARING = "c9e4b1d7a3f2"


def test_fixed_studies_are_shared_out_by_document_at_the_first_start_and_nothing_scored_moves(tmp_path):
    """A fixed study shared by question (each annotator's questions scattered over every document) keeps every
    score and every scored question's annotator; its documents then go to k annotators each."""
    from sqlalchemy import select

    from app.cli.serve import check_migrated_studies
    from app.models import Question, Score, Study, StudyAssignment
    from app.services.accounts import create_user
    from app.services.annotation.pages import load_question_page
    from app.services.annotation.scoring import save_from_request
    from app.services.importers import import_path
    from app.services.studies.setup import StudySpec, create_study
    from tests.support.study_data import write_study_set

    app = make_app(tmp_path)
    folder = write_study_set(tmp_path / "data", documents=4, questions_each=3)
    with app.app_context():
        upgrade()
        assert not import_path(folder).failed
        people = [create_user(name, f"{name}-pass-12345", "annotator").id for name in ("ann", "bea", "cid")]
        study = create_study(StudySpec(name="Fixed", overlap=2, annotator_ids=people, status="open"))
        questions = list(db.session.scalars(select(Question.id).order_by(Question.document_id, Question.position)))
        # The old plan: question i to annotators i and i+1 (mod 3), so everyone has questions on every document.
        db.session.query(StudyAssignment).filter_by(study_id=study.id).delete()
        for i, question in enumerate(questions):
            for user in (people[i % 3], people[(i + 1) % 3]):
                db.session.add(StudyAssignment(study_id=study.id, user_id=user, question_id=question))
        db.session.commit()
        scored = []
        for user, question in ((people[0], questions[0]), (people[0], questions[3]), (people[2], questions[4])):
            page = load_question_page(study, user, question)
            for card in page.answers:
                save_from_request(user, {"study": study.id, "question_id": question, "label": card.label, "value": 3,
                                         "answer": card.sha256, "seconds": 20})
            scored.append((user, question))
        before = sorted(db.session.execute(select(Score.id, Score.answer_id, Score.value)).all())
        study_id = study.id
        db.session.remove()
        downgrade(revision=BEFORE_SHARING)
        upgrade()
        with db.engine.connect() as connection:
            assert connection.execute(text("SELECT shared_by_document, allocation_seed IS NOT NULL FROM studies")
                                      ).all() == [(False, True)]
        check_migrated_studies()
        assert sorted(db.session.execute(select(Score.id, Score.answer_id, Score.value)).all()) == before
        rows = set(db.session.execute(select(StudyAssignment.user_id, StudyAssignment.question_id)
                                      .where(StudyAssignment.study_id == study_id)).all())
        assert set(scored) <= rows  # nothing scored moved
        document_of = dict(db.session.execute(select(Question.id, Question.document_id)).all())
        readers: dict[int, set[int]] = {}
        for user, question in rows:
            readers.setdefault(document_of[question], set()).add(user)
        readings = sum(len(users) for users in readers.values())
        assert readings <= 2 * 4 + 1  # k readings a document, and one kept partial reading
        for document, users in readers.items():  # every document wholly with at least k of them
            whole = [u for u in users if all((u, q) in rows for q, d in document_of.items() if d == document)]
            assert len(whole) >= 2
        assert db.session.get(Study, study_id).shared_by_document


BEFORE_STUDY_SETS_BY_ID = "b3d9f2a6c8e1"  # the allocation policy's migration


def test_stored_study_sets_by_name_become_the_id_the_old_reading_found(tmp_path):
    """`study:<name>` in a generation run's spec becomes `study:<id>` of the study it named (a study named "7"
    stood behind study 7 only when no study 7 existed); runs of other sets, and scores, stay as they were."""
    app = make_app(tmp_path)
    with app.app_context():
        upgrade(revision=BEFORE_STUDIES)
        with db.engine.begin() as connection:
            seed_before_studies(connection)
        upgrade(revision=BEFORE_STUDY_SETS_BY_ID)
        with db.engine.begin() as connection:
            columns = [c["name"] for c in inspect(db.engine).get_columns("studies") if c["name"] not in ("id", "name")]
            for study_id, name in ((2, "Pilot 二"), (3, "7"), (4, "1")):
                connection.execute(text(f"INSERT INTO studies (id, name, {', '.join(columns)}) SELECT :id, :name, "
                                        f"{', '.join(columns)} FROM studies WHERE id = 1"), {"id": study_id, "name": name})
            sets = ["study:Pilot 二", "study:7", "study:1", "study:3", "study:nobody", "human_eval", "ids:1"]
            for run_id, chosen in enumerate(sets, start=1):
                connection.execute(text(
                    "INSERT INTO generation_runs (id, system_name, spec, manifest, questions, answered, created_at) "
                    "VALUES (:id, :system, :spec, '{}', 1, 0, '2026-01-03 00:00:00')"),
                    {"id": run_id, "system": f"gen-{run_id}", "spec": json.dumps({"question_set": chosen, "model": "m"})})
            before = connection.execute(text("SELECT id, answer_id, value FROM scores ORDER BY id")).all()
        upgrade()
        with db.engine.connect() as connection:
            specs = {run_id: json_value(spec) for run_id, spec in connection.execute(
                text("SELECT id, spec FROM generation_runs ORDER BY id"))}
            assert connection.execute(text("SELECT id, answer_id, value FROM scores ORDER BY id")).all() == before
        # By name; a name of digits with no study of that id; an id that exists (study 1, not the one named "1").
        assert [specs[i]["question_set"] for i in range(1, 8)] == [
            "study:2", "study:3", "study:1", "study:3", "study:nobody", "human_eval", "ids:1"]
        assert all(spec["model"] == "m" for spec in specs.values())
        downgrade(revision=BEFORE_STUDY_SETS_BY_ID)
        db.session.remove()
        db.engine.dispose()


BEFORE_TEXT_REPEATS = "c8a4e1f2d7b3"  # studies share documents (allocation fields)


def test_text_repeats_arrive_empty_on_a_scored_database_and_leave_it_as_it_was(tmp_path):
    """The references check's store is new and empty; a study's answers, scores and hidden references stay."""
    app = make_app(tmp_path)
    with app.app_context():
        upgrade(revision=BEFORE_STUDIES)
        with db.engine.begin() as connection:
            seed_before_studies(connection)
        upgrade(revision=BEFORE_TEXT_REPEATS)
        with db.engine.connect() as connection:
            before = connection.execute(text("SELECT id, answer_id, value FROM scores ORDER BY id")).all()
            answers = connection.execute(text("SELECT id, sha256, text FROM answers ORDER BY id")).all()
        upgrade()
        with db.engine.begin() as connection:
            assert connection.execute(text("SELECT id, answer_id, value FROM scores ORDER BY id")).all() == before
            assert connection.execute(text("SELECT id, sha256, text FROM answers ORDER BY id")).all() == answers
            assert connection.execute(text("SELECT count(*) FROM text_repeats")).scalar() == 0
            row = {"rule": "r", "a": answers[0][1], "b": "b" * 64}
            connection.execute(text("INSERT INTO text_repeats (rule, text_sha256, other_sha256, match) "
                                    "VALUES (:rule, :a, :b, 'identical')"), row)
        with pytest.raises(Exception, match="(?i)unique|duplicate"):  # one answer per pair and rule
            with db.engine.begin() as connection:
                connection.execute(text("INSERT INTO text_repeats (rule, text_sha256, other_sha256, match) "
                                        "VALUES (:rule, :a, :b, '')"), row)
        downgrade(revision=BEFORE_TEXT_REPEATS)
        assert "text_repeats" not in inspect(db.engine).get_table_names()
        with db.engine.connect() as connection:
            assert connection.execute(text("SELECT id, answer_id, value FROM scores ORDER BY id")).all() == before
        upgrade()
        db.session.remove()
        db.engine.dispose()


BEFORE_PLANNER_SETTINGS = "c6e1a9d3f4b2"  # the text_repeats migration


def test_small_tables_analyse_threshold_arrives_on_a_scored_database_and_leaves_it_as_it_was(tmp_path):
    """PostgreSQL: a storage parameter on the small tables, set and reset; the rows never move (SQLite: nothing)."""
    app = make_app(tmp_path)
    with app.app_context():
        upgrade(revision=BEFORE_STUDIES)
        with db.engine.begin() as connection:
            seed_before_studies(connection)
        upgrade(revision=BEFORE_PLANNER_SETTINGS)
        with db.engine.connect() as connection:
            before = connection.execute(text("SELECT id, round_id, answer_id, value FROM scores ORDER BY id")).all()
        postgres = db.engine.dialect.name == "postgresql"
        options = "SELECT reloptions FROM pg_class WHERE relname = 'annotation_rounds'"
        upgrade()
        with db.engine.connect() as connection:
            assert connection.execute(text("SELECT id, round_id, answer_id, value FROM scores ORDER BY id")).all() == before
            if postgres:
                assert connection.execute(text(options)).scalar() == ["autovacuum_analyze_threshold=5"]
        downgrade(revision=BEFORE_PLANNER_SETTINGS)
        with db.engine.connect() as connection:
            assert connection.execute(text("SELECT id, round_id, answer_id, value FROM scores ORDER BY id")).all() == before
            if postgres:
                assert connection.execute(text(options)).scalar() in (None, [])
        upgrade()
        db.session.remove()
        db.engine.dispose()


BEFORE_LONGBENCH = "c9a4e2b7d1f3"  # the small tables' planner statistics


def test_longbench_tables_arrive_on_a_scored_database_and_leave_it_as_it_was(tmp_path):
    """Two new tables, nothing existing touched; going back drops them and keeps everything else."""
    app = make_app(tmp_path)
    with app.app_context():
        upgrade(revision=BEFORE_STUDIES)
        with db.engine.begin() as connection:
            seed_before_studies(connection)
        upgrade(revision=BEFORE_LONGBENCH)
        with db.engine.connect() as connection:
            before = connection.execute(text("SELECT id, answer_id, value FROM scores ORDER BY id")).all()
            predictions = connection.execute(text("SELECT id, text FROM predictions ORDER BY id")).all()
        upgrade()
        with db.engine.begin() as connection:
            q = lambda sql: connection.execute(text(sql)).all()  # noqa: E731
            assert q("SELECT id, answer_id, value FROM scores ORDER BY id") == before
            assert q("SELECT id, text FROM predictions ORDER BY id") == predictions
            assert q("SELECT count(*) FROM longbench_items") == q("SELECT count(*) FROM longbench_answers") == [(0,)]
            connection.execute(text(
                "INSERT INTO longbench_items (question_id, variant, dataset, position, item_id, answers, all_classes, "
                "length, difficulty, length_class, domain) VALUES (1, 'v1', 'trec', 1, '', '[\"city\"]', "
                "'[\"city\", \"state\"]', 3000, '', '', '')"))
            connection.execute(text("INSERT INTO longbench_answers (prediction_id, choice, judge) VALUES (1, 'A', TRUE)"))
        downgrade(revision=BEFORE_LONGBENCH)
        with db.engine.connect() as connection:
            assert not {"longbench_items", "longbench_answers"} & set(inspect(db.engine).get_table_names())
            assert connection.execute(text("SELECT id, answer_id, value FROM scores ORDER BY id")).all() == before
            assert connection.execute(text("SELECT id, text FROM predictions ORDER BY id")).all() == predictions
        upgrade()
        db.session.remove()
        db.engine.dispose()


BEFORE_IDENTICAL = "d4b8f1a6c2e9"  # LongBench's tables


def test_identical_answers_option_arrives_off_on_a_scored_database_and_leaves_it_as_it_was(tmp_path):
    """Issue 40, item 4: studies made before the option keep showing identical answers apart (their scores were
    given that way); no slot is a twin, no score a copy; scores, rounds and views stay; going back keeps them."""
    app = make_app(tmp_path)
    with app.app_context():
        upgrade(revision=BEFORE_STUDIES)
        with db.engine.begin() as connection:
            seed_before_studies(connection)
            # model-b gives model-a's answer word for word: identical answers, scored apart before the option.
            connection.execute(text("UPDATE predictions SET text = (SELECT text FROM predictions WHERE id = 1) "
                                    "WHERE id = 2"))
        upgrade(revision=BEFORE_IDENTICAL)
        with db.engine.connect() as connection:
            before = connection.execute(text("SELECT id, round_id, answer_id, value, comment FROM scores "
                                             "ORDER BY id")).all()
            views = connection.execute(text('SELECT id, round_id, "order" FROM question_views ORDER BY id')).all()
            slots = connection.execute(text("SELECT id, answer_id, excluded FROM study_answers ORDER BY id")).all()
        assert len(before) == 3
        upgrade()
        with db.engine.begin() as connection:
            q = lambda sql: connection.execute(text(sql)).all()  # noqa: E731
            assert q("SELECT name, merge_identical FROM studies") == [("L-Eval human evaluation", False)]
            assert q("SELECT id, round_id, answer_id, value, comment FROM scores ORDER BY id") == before
            assert q("SELECT count(*) FROM scores WHERE copied_from_id IS NOT NULL") == [(0,)]
            assert q("SELECT id, answer_id, excluded FROM study_answers ORDER BY id") == slots
            assert q("SELECT count(*) FROM study_answers WHERE twin_of_id IS NOT NULL") == [(0,)]
            assert q('SELECT id, round_id, "order" FROM question_views ORDER BY id') == views
            # The new columns hold what the feature writes: a twin slot and a recorded copy.
            first, second = [row[0] for row in q("SELECT id FROM study_answers ORDER BY id")[:2]]
            connection.execute(text("UPDATE study_answers SET twin_of_id = :first WHERE id = :second"),
                               {"first": first, "second": second})
            connection.execute(text("UPDATE scores SET copied_from_id = 1 WHERE id = 3"))
        downgrade(revision=BEFORE_IDENTICAL)
        with db.engine.connect() as connection:
            assert connection.execute(text("SELECT id, round_id, answer_id, value, comment FROM scores "
                                           "ORDER BY id")).all() == before
            columns = {column["name"] for column in inspect(db.engine).get_columns("scores")}
            assert "copied_from_id" not in columns
            assert "twin_of_id" not in {c["name"] for c in inspect(db.engine).get_columns("study_answers")}
        db.session.remove()
        db.engine.dispose()


BEFORE_SLOT_INDEX = "e7c3a5f1b9d2"  # idempotent API requests


def test_the_study_slot_index_arrives_on_a_scored_database_and_the_export_join_uses_it(tmp_path):
    """Issue 38: a score's slot is found by (study, answer) through one index; rows never move either way."""
    app = make_app(tmp_path)
    with app.app_context():
        upgrade(revision=BEFORE_STUDIES)
        with db.engine.begin() as connection:
            seed_before_studies(connection)
        upgrade(revision=BEFORE_SLOT_INDEX)
        with db.engine.connect() as connection:
            before = connection.execute(text("SELECT id, round_id, answer_id, value FROM scores ORDER BY id")).all()
            slots = connection.execute(text("SELECT id, study_id, answer_id FROM study_answers ORDER BY id")).all()
        assert before and slots
        upgrade()
        names = {index["name"] for index in inspect(db.engine).get_indexes("study_answers")}
        assert "ix_study_answers_study_id_answer_id" in names
        with db.engine.connect() as connection:
            assert connection.execute(text("SELECT id, round_id, answer_id, value FROM scores ORDER BY id")).all() == before
            assert connection.execute(text("SELECT id, study_id, answer_id FROM study_answers ORDER BY id")).all() == slots
            if db.engine.dialect.name == "sqlite":
                plan = " ".join(str(row[-1]) for row in connection.execute(text(
                    "EXPLAIN QUERY PLAN SELECT s.id FROM scores s LEFT JOIN study_answers sa "
                    "ON sa.study_id = 1 AND sa.answer_id = s.answer_id")))
                assert "ix_study_answers_study_id_answer_id" in plan, plan
        downgrade(revision=BEFORE_SLOT_INDEX)
        names = {index["name"] for index in inspect(db.engine).get_indexes("study_answers")}
        assert "ix_study_answers_study_id_answer_id" not in names
        with db.engine.connect() as connection:
            assert connection.execute(text("SELECT id, round_id, answer_id, value FROM scores ORDER BY id")).all() == before
        upgrade()
        db.session.remove()
        db.engine.dispose()
