"""The study commands: NAME and `--study NAME` are always names, `--study-id ID` always an id; a study named "1"
is never taken for the study whose id is 1, and a name no script could use again is refused naming the rule."""
from __future__ import annotations

import json

import pytest
from sqlalchemy import select

from app.extensions import db
from app.models import Study
from tests.support.predictions import load_demo_data


@pytest.fixture
def two(app, runner):
    """The demo's study and a study named after the demo study's id."""
    load_demo_data(app)
    with app.app_context():
        first = db.session.scalars(select(Study).order_by(Study.id)).first()
        first_id, first_name = first.id, first.name
    created = runner.invoke(args=["study", "create", str(first_id), "--questions", "demo"])
    assert created.exit_code == 0, created.output
    with app.app_context():
        named = db.session.scalars(select(Study.id).where(Study.name == str(first_id))).one()
    return first_id, first_name, named


def status(app, study_id: int) -> str:
    with app.app_context():
        return db.session.get(Study, study_id).status


def test_name_arguments_are_names_even_when_they_are_digits(app, runner, two):
    first_id, _, named = two
    before = status(app, first_id)
    shown = runner.invoke(args=["study", "show", str(first_id), "--json"])
    assert shown.exit_code == 0 and json.loads(shown.output)["id"] == named
    assert runner.invoke(args=["study", "open", str(first_id)]).exit_code == 0
    assert status(app, named) == "open" and status(app, first_id) == before
    assert runner.invoke(args=["study", "close", str(first_id)]).exit_code == 0
    assert status(app, named) == "closed" and status(app, first_id) == before


def test_study_and_study_id_say_which_and_never_both(runner, two):
    first_id, first_name, named = two
    by_name = runner.invoke(args=["export", "--format", "results", "--out", "-", "--study", str(first_id)])
    assert by_name.exit_code == 0 and json.loads(by_name.stdout)["study"]["id"] == named
    by_id = runner.invoke(args=["export", "--format", "results", "--out", "-", "--study-id", str(first_id)])
    assert by_id.exit_code == 0 and json.loads(by_id.stdout)["study"]["name"] == first_name
    both = runner.invoke(args=["export", "--out", "-", "--study", "x", "--study-id", "1"])
    assert both.exit_code == 2 and "not both" in both.output
    for bad in ("¹", "٣", "1.5", str(2 ** 63)):
        refused = runner.invoke(args=["export", "--out", "-", "--study-id", bad])
        assert refused.exit_code == 2 and "is not an id" in refused.output, bad
    missing = runner.invoke(args=["export", "--out", "-", "--study", "nobody"])
    assert missing.exit_code == 2 and "no study named 'nobody'" in missing.output
    assert "--study-id ID" in missing.output


def test_an_unknown_name_says_names_are_names(runner, two):
    result = runner.invoke(args=["study", "show", "999999"])
    assert result.exit_code == 2 and "no study named '999999'" in result.output
    assert "NAME is a study's name" in result.output


@pytest.mark.parametrize("name", ["a/b", "二/三", "..", "rtl\u202eoverride"])
def test_a_name_no_script_can_use_is_refused_naming_the_rule(app, runner, name):
    load_demo_data(app)
    result = runner.invoke(args=["study", "create", name, "--questions", "demo"])
    assert result.exit_code == 1 and "is not allowed: a study name has 1 to 120 characters" in result.output
    with app.app_context():
        assert db.session.scalars(select(Study).where(Study.name == name)).first() is None


def test_a_chinese_name_is_created_and_found_by_name(app, runner):
    load_demo_data(app)
    assert runner.invoke(args=["study", "create", "人工评测 第一轮", "--questions", "demo"]).exit_code == 0
    shown = runner.invoke(args=["study", "show", "人工评测 第一轮", "--json"])
    assert shown.exit_code == 0 and json.loads(shown.output)["name"] == "人工评测 第一轮"
