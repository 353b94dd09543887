"""Hostile text never runs: markup in answers, references, a document, a system name, a username,
a comment and a judge's reply is shown literally on every page that shows it.

The browser context bypasses the Content-Security-Policy on purpose: the policy would stop an
inline handler even if a template forgot to escape, so with it on this test could not tell.
Escaping alone must hold; the policy is the second wall (its header is checked too).
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

from app.services.demo import DEMO_PATH
from tests.e2e.conftest import screenshot, sign_in, start_server, stop_server, wait_until
from tests.support.live import ADMIN, SHARED_PASSWORD, HttpSession, instance_database, prepare_instance
from tests.support.openai_stub import StubOpenAIServer

pytestmark = pytest.mark.e2e

IMG = '<img src=x onerror="window.__pwned=1">'
SCRIPT = "<script>window.__pwned=1</script>"
SVG = '"><svg onload=window.__pwned=1>'
SYSTEM = SVG
USERNAME = IMG
QUESTION = f"What did the board decide? {SCRIPT}"
REFERENCE = f"It raised the rate. {SVG}"
ANSWER = f"The rate went up {IMG} {SCRIPT}"
DOCUMENT_MARK = f"Minutes of the meeting {SCRIPT} {IMG} {SVG}"
COMMENT = f"</textarea>{SCRIPT}{IMG}"
VERDICT = f"{SCRIPT}{IMG} Answer A is better. [[A]]"
UPLOADED = f"{IMG}.pred.jsonl"
STUDY = f"Hostile {IMG}"  # a study name holds no / (the name rule), so no closing tag


def hostile_files(folder: Path) -> None:
    """A human-eval document whose every text is hostile, and a system named with markup that answers it all."""
    folder.mkdir(parents=True)
    reference = {
        "instructions": [QUESTION], "outputs": [REFERENCE], "gpt4_outputs": [REFERENCE], "claude_outputs": [REFERENCE],
        "input": (DOCUMENT_MARK + "\n\n") + "The board met and voted on the rate.\n" * 40,
        "source": "meeting_summ", "evaluation": "human",
    }
    (folder / "hostile.ref.jsonl").write_text(json.dumps(reference) + "\n", encoding="utf-8")
    rows = [{"query": QUESTION, "gt": REFERENCE, "hostile_pred": ANSWER, "evaluation": "human"}]
    for i, line in enumerate((DEMO_PATH / "human_eval" / "shaky-3b.pred.jsonl").read_text(encoding="utf-8").splitlines()):
        demo = json.loads(line)
        rows.append({"query": demo["query"], "gt": demo["gt"], "hostile_pred": f"{ANSWER} #{i}", "evaluation": "human"})
    (folder / f"{SYSTEM}.pred.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def one_study(instance: Path) -> None:
    """One open study with the hostile question and the demo's, and every system: the hostile one beside others."""
    from sqlalchemy import select, update

    from app import create_app
    from app.extensions import db
    from app.models import Document, Study, System
    from app.services import deletion
    from app.services.studies.setup import StudySpec, create_study, subset_questions

    app = create_app({"INSTANCE_PATH": instance})
    with app.app_context():
        for study in db.session.scalars(select(Study)).all():
            deletion.delete_study(study)
        # The hostile rows join the demo's side: a study never mixes demo and real data, and here the hostile
        # answers must stand beside the demo's systems on every page.
        for model in (Document, System):
            db.session.execute(update(model).values(is_demo=True))
        db.session.commit()
        create_study(StudySpec(name=STUDY, status="open",
                               question_ids=subset_questions() + subset_questions(demo=True),
                               system_ids=list(db.session.scalars(select(System.id)))))
        db.session.remove()
        db.engine.dispose()


def judge_and_score(instance: Path, stub_url: str, monkeypatch) -> None:
    """Score the hostile system's metrics and judge it against shaky-3b, as the commands do."""
    from app import create_app
    from app.extensions import db

    monkeypatch.setenv("OPENAI_BASE_URL", stub_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-xss-test")
    app = create_app({"INSTANCE_PATH": instance})
    runner = app.test_cli_runner()
    for args in (["score-metrics"], ["judge", SYSTEM, "--battle-with", "shaky-3b", "--concurrency", "4"]):
        result = runner.invoke(args=args)
        assert result.exit_code == 0, result.output
    with app.app_context():
        db.session.remove()
        db.engine.dispose()


def assert_nothing_ran(page, *literal: str) -> None:
    """Each text in `literal` is on the page as text (waited for: some pages render what they fetch), and no
    payload executed or became an element."""
    def shown() -> str:
        return page.evaluate("document.title + ' ' + document.body.textContent")

    wait_until(page, lambda: all(expected in shown() for expected in literal), f"{page.url} shows {literal}")
    assert page.evaluate("typeof window.__pwned") == "undefined", page.url
    injected = page.evaluate("""() => ({
        handlers: document.querySelectorAll('[onerror],[onload]').length,
        images: document.querySelectorAll('img[src="x"]').length,
        scripts: [...document.scripts].filter(s => s.textContent.includes('__pwned')).length,
    })""")
    assert injected == {"handlers": 0, "images": 0, "scripts": 0}, (page.url, injected)


@pytest.fixture
def hostile_server(tmp_path, monkeypatch):
    hostile_files(tmp_path / "hostile")
    instance = tmp_path / "instance"
    prepare_instance(instance, annotators=[USERNAME], folders=(tmp_path / "hostile",))
    one_study(instance)
    with StubOpenAIServer(policy=lambda body: VERDICT) as stub:
        judge_and_score(instance, stub.base_url, monkeypatch)
    server = start_server(instance, {"LEVAL_WORKERS": "0"})
    yield server
    stop_server(server)


def test_hostile_text_is_shown_literally_and_never_runs(hostile_server, browser):
    server = hostile_server
    context = browser.new_context(bypass_csp=True, viewport={"width": 1280, "height": 800})
    dialogs: list[str] = []
    try:
        page = context.new_page()
        page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))

        # The annotator with the hostile name scores the hostile answer and leaves a hostile comment.
        sign_in(page, server.url, USERNAME, SHARED_PASSWORD)
        question_id = _hostile_question(server)
        page.goto(f"{server.url}/annotate/{_study(server)}/q/{question_id}")
        expect(page.locator(".doc-seg").first).to_be_visible()
        assert_nothing_ran(page, USERNAME, QUESTION, REFERENCE, ANSWER, DOCUMENT_MARK)
        answer = page.get_by_role("radiogroup").first
        answer.get_by_role("radio", name="2", exact=True).check()
        expect(page.get_by_role("status")).to_have_text("Saved")
        page.locator("details.comment-box summary").first.click()
        with page.expect_response(lambda r: r.url.endswith("/annotate/api/score") and r.ok):
            page.locator("textarea.comment").first.fill(COMMENT)
            page.locator("textarea.comment").first.blur()
        page.reload(wait_until="domcontentloaded")  # the value check below waits for the comment itself
        expect(page.locator("textarea.comment").first).to_have_value(COMMENT)
        assert_nothing_ran(page, QUESTION, ANSWER)
        screenshot(page, "xss-question-page")
        _score_a_demo_question(server)

        context.clear_cookies()
        sign_in(page, server.url, ADMIN, SHARED_PASSWORD)
        system_id, job_id = _ids(server)
        visits = {
            "/admin/users": [USERNAME], f"/studies/{_study(server)}": [USERNAME, SYSTEM, STUDY], "/studies": [STUDY],
            "/leaderboard": [SYSTEM], f"/leaderboard/systems/{system_id}": [SYSTEM],
            f"/leaderboard/systems/{system_id}/questions?task=human_eval&metric=f1": [SYSTEM, QUESTION, ANSWER],
            "/results": [SYSTEM, USERNAME], "/results/correlation": [], "/results/agreement": [],
            "/results/disagreements": [], "/results/exports": [USERNAME], "/results/length-instruction": [SYSTEM],
            "/judge/": [SYSTEM], f"/judge/runs/{job_id}": [SYSTEM, VERDICT], "/predictions": [SYSTEM], "/jobs": [],
        }
        for path, literal in visits.items():
            response = page.goto(server.url + path)
            assert response.status == 200, path
            if path.startswith("/judge/runs/"):
                page.locator("table.pairs summary").first.click()
                screenshot(page, "xss-judge-run")
            assert_nothing_ran(page, *literal)
        assert "script-src 'self'" in response.headers["content-security-policy"]

        page.goto(server.url + "/predictions")
        unmatched = json.dumps({"query": QUESTION + " (not in the data)", "gt": "x", "hostile_pred": ANSWER,
                                "evaluation": "human"})
        page.locator("input[type=file]").set_input_files(
            files=[{"name": UPLOADED, "mimeType": "application/json", "buffer": (unmatched + "\n").encode()}])
        page.locator("form[action$='/predictions/upload'] button[type=submit]").click()
        page.wait_for_url(re.compile(r"/predictions/uploads/"))
        assert_nothing_ran(page, UPLOADED, IMG)
        screenshot(page, "xss-upload-preview")
    finally:
        context.close()
    assert not dialogs, dialogs


def _study(server) -> int:
    with instance_database(server.instance) as con:
        (study_id,) = con.execute("SELECT id FROM studies").fetchone()
    return study_id


def _hostile_question(server) -> int:
    with instance_database(server.instance) as con:
        (question_id,) = con.execute("SELECT id FROM questions WHERE instruction = ?", (QUESTION,)).fetchone()
    return question_id


def _ids(server) -> tuple[int, int]:
    with instance_database(server.instance) as con:
        (system_id,) = con.execute("SELECT id FROM systems WHERE name = ?", (SYSTEM,)).fetchone()
        (job_id,) = con.execute("SELECT id FROM jobs WHERE kind = 'judge'").fetchone()
    return system_id, job_id


def _score_a_demo_question(server) -> None:
    """Score every answer of one demo question, so the results pages have the hostile system beside others."""
    session = HttpSession(server.url)
    session.sign_in(USERNAME)
    with instance_database(server.instance) as con:
        (question_id,) = con.execute("SELECT q.id FROM questions q JOIN documents d ON d.id = q.document_id "
                                     "WHERE d.collection = 'human_eval' AND q.instruction != ? ORDER BY q.id", (QUESTION,)
                                     ).fetchone()
    for value, (question, label) in enumerate(session.answers([question_id]), start=1):
        status, *_ = session.save(question, label, min(value, 5))
        assert status == 200
