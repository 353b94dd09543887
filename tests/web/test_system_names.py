"""System names with hidden characters, Windows device names or only dots are refused, with one message, on
every path that names a system (audit "Hardening, second round", finding 10): the upload form's *System name*,
an uploaded file's name, a zip's folder, LV-Eval (upload and command line), `import-leval` and generation's
*Store as system* (page and command line). The rule's one owner is app.services.input_rules.system_name_problem.
"""
from __future__ import annotations

import json

import pytest
from sqlalchemy import select

from app.extensions import db
from app.models import GenerationRun, System
from app.services.input_rules import SYSTEM_NAME_RULE, system_name_problem
from tests.support.lveval_data import write_model
from tests.support.predictions import batch_id, demo_file, load_demo_data, make_zip, post_upload
from tests.web.test_generation import form as generation_form
from tests.web.test_upload_hardening import QUALITY, preview_of

BIDI_CONTROLS = ["\u200e", "\u200f", "\u202a", "\u202b", "\u202c", "\u202d", "\u202e", "\u2066", "\u2067", "\u2068",
                 "\u2069", "\u061c"]
INVISIBLE = ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad"]  # zero-width, word joiner, BOM, soft hyphen
WINDOWS_RESERVED = ["CON", "prn", "Aux", "nul", "COM1", "com9", "LPT1", "lpt9", "con.txt", "NUL.pred", "Com3.x.y"]
ONLY_DOTS = [".", "..", "..."]
REFUSED = ([f"evil{ch}gnp.html" for ch in BIDI_CONTROLS] + [f"zero{ch}width" for ch in INVISIBLE] + WINDOWS_RESERVED
           + ONLY_DOTS)
ACCEPTED = ["CONTROL", "console", "COM10", "LPT0", "nul-model", "a.b", "..a", "model-7b", "中文模型", "Ünïcödé",
            "gpt-4 (0613)", "my_CON"]


@pytest.mark.parametrize("name", REFUSED, ids=ascii)
def test_the_rule_refuses_hidden_characters_device_names_and_dots(name):
    problem = system_name_problem(name)
    assert problem and problem.endswith(f"is not allowed: {SYSTEM_NAME_RULE}")
    assert not any(ch in problem for ch in BIDI_CONTROLS + INVISIBLE), "the message shows the name escaped"


@pytest.mark.parametrize("name", ACCEPTED, ids=ascii)
def test_the_rule_accepts_names_that_only_look_alike(name):
    assert system_name_problem(name) is None


@pytest.fixture
def researcher(app, client, auth):
    load_demo_data(app)
    auth.login("researcher")
    return client


def upload_errors(app, client, auth, name: str, raw: bytes, system: str = "") -> list[str]:
    (preview,) = preview_of(app, batch_id(post_upload(client, auth, [(name, raw)], system=system))).files
    return [error["message"] for error in preview.errors]


def no_system(app, name: str) -> bool:
    with app.app_context():
        return db.session.scalars(select(System).where(System.name == name)).first() is None


@pytest.mark.parametrize("name", ["evil\u202egnp", "CON", "..", "zero\u200bwidth"], ids=ascii)
def test_the_upload_forms_system_name_is_refused(app, researcher, auth, name):
    errors = upload_errors(app, researcher, auth, "quality.pred.jsonl", demo_file(QUALITY, "x"), system=name)
    assert errors == [f"the system name {name!r} is not allowed: {SYSTEM_NAME_RULE}"]


@pytest.mark.parametrize("file_name, system", [("nul.pred.jsonl", "nul"), ("LPT1.pred.jsonl", "LPT1"),
                                               ("a\u2066b.pred.jsonl", "a\u2066b")], ids=ascii)
def test_an_uploaded_files_name_is_refused_as_a_system_name(app, researcher, auth, file_name, system):
    errors = upload_errors(app, researcher, auth, file_name, demo_file("human_eval/terse-13b.pred.jsonl", system))
    assert f"is not allowed: {SYSTEM_NAME_RULE}" in errors[0], errors


@pytest.mark.parametrize("folder", ["AUX", "...", "rtl\u202emodel"], ids=ascii)
def test_a_zip_folder_is_refused_as_a_system_name(app, researcher, auth, folder):
    archive = make_zip({f"{folder}/quality.pred.jsonl": demo_file(QUALITY, "x")})
    errors = upload_errors(app, researcher, auth, "names.zip", archive)
    assert errors == [f"the system name {folder!r} is not allowed: {SYSTEM_NAME_RULE}"]


def test_an_lveval_upload_refuses_a_device_name_folder(app, researcher, auth, tmp_path):
    folder = write_model(tmp_path, "com1", rows=3, datasets=["cmrc_mixup"], levels=["16k"])
    archive = make_zip({f"com1/{path.name}": path.read_bytes() for path in folder.iterdir()})
    errors = upload_errors(app, researcher, auth, "lv.zip", archive)
    assert f"the system name 'com1' is not allowed: {SYSTEM_NAME_RULE}" in errors, errors
    assert no_system(app, "com1")


@pytest.mark.parametrize("name", ["PRN", "lv\u202emodel"], ids=ascii)
def test_the_lveval_command_refuses_them(app, runner, tmp_path, name):
    folder = write_model(tmp_path, "plain", rows=3, datasets=["cmrc_mixup"], levels=["16k"])
    result = runner.invoke(args=["import-lveval", str(folder), "--system", name])
    assert result.exit_code == 1 and f"is not allowed: {SYSTEM_NAME_RULE}" in result.output, result.output
    assert no_system(app, name)


@pytest.mark.parametrize("file_name, system", [("con.pred.jsonl", "con"), ("zw\u200dj.pred.jsonl", "zw\u200dj")],
                         ids=ascii)
def test_the_import_command_refuses_them(app, runner, tmp_path, file_name, system):
    from app.services.demo import DEMO_PATH

    load_demo_data(app)
    (tmp_path / file_name).write_bytes((DEMO_PATH / "human_eval/terse-13b.pred.jsonl").read_bytes())
    result = runner.invoke(args=["import-leval", str(tmp_path), "--json"])
    (report,) = json.loads(result.output)["files"]
    assert result.exit_code == 1 and report["error"]["message"] == (
        f"the system name {system!r} is not allowed: {SYSTEM_NAME_RULE}"), result.output
    assert no_system(app, system)


@pytest.mark.parametrize("name", ["COM1", "nul.txt", "..."])
def test_generations_store_as_system_refuses_them_on_the_page(demo, client, auth, stub, monkeypatch, name):
    monkeypatch.setenv("LEVAL_TOKENIZER", "estimate")
    auth.login("researcher")
    page = client.post("/generate/", data=generation_form(demo, auth, stub, system_name=name, launch="Start"),
                       follow_redirects=True).get_data(as_text=True)
    assert f"is not allowed: {SYSTEM_NAME_RULE}" in page.replace("&#39;", "'").replace("&amp;", "&")
    assert stub.calls == 0
    with demo.app_context():
        assert db.session.scalars(select(GenerationRun)).first() is None


def test_generations_command_refuses_them(demo, runner, stub, monkeypatch):
    monkeypatch.setenv("LEVAL_TOKENIZER", "estimate")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-generate-test-0123456789")
    result = runner.invoke(args=["generate", "--base-url", stub.base_url, "--model", "m", "--questions", "human_eval",
                                 "--system", "LPT3", "--json"])
    assert result.exit_code != 0 and f"system name: the system name 'LPT3' is not allowed: {SYSTEM_NAME_RULE}" in (
        result.output), result.output
    assert stub.calls == 0 and no_system(demo, "LPT3")

