"""Every page of an instance built the README's way answers without a 5xx, for every role (issue 41).

The instance is made as a new user makes it: the first start (the demo, scored), `import-leval` of
L-Eval's human-evaluation folder and its metrics, an upload of one more system on Predictions, an
LV-Eval model folder, LongBench's data, pred/, pred_e/ and v2 files, a fixed study with scores, judge,
rater and generation runs against the local OpenAI stub, and an adaptive study. Then every same-origin link is followed from the home page as
admin, researcher and annotator, and as staff in the demo view, bounded by count: a link that differs
from one already seen only in its numbers counts as the same page kind after a few of them. A new page
joins the walk by itself as soon as a page links to it. The API's GET routes without parameters are
walked with a read token as well.
"""
from __future__ import annotations

import hashlib
import json
import re
from collections import Counter, deque
from html.parser import HTMLParser
from urllib.parse import urljoin, urlsplit

from sqlalchemy import select

from app.extensions import db
from app.models import Job, Study
from app.services.jobs.worker import execute_job
from app.services.judge import save_settings
from app.services.llm import endpoints
from tests.support.api import make_token
from tests.support.longbench_data import write_data as write_longbench_data
from tests.support.longbench_data import write_model as write_longbench_model
from tests.support.longbench_data import write_v2 as write_longbench_v2
from tests.support.lveval_data import write_model
from tests.support.predictions import batch_id, confirm, post_upload
from tests.support.scoring_data import generate_scores
from tests.support.shared import require_human_eval

PAGE_KINDS_PER_PATTERN = 4  # links equal but for their numbers: enough to meet each page kind's variants
MOST_PAGES = 600  # per walk
NEVER_FOLLOWED = ("/logout", "/static/")


def reply(body) -> str:
    """One reply the judge, the rater and generation each read: a verdict, a rating and some text."""
    text = json.dumps(body.get("messages", []), sort_keys=True)
    digest = hashlib.sha256(text.encode()).digest()
    return (f"The answers were compared with the references. Final verdict: [[{'ABC'[digest[0] % 3]}]]\n"
            f"Rating: [[{1 + digest[1] % 5}]]")


STUB_POLICY = reply


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []

    def handle_starttag(self, tag, attrs) -> None:
        href = dict(attrs).get("href")
        if tag == "a" and href:
            self.links.append(href)


def _kind(url: str) -> tuple[str, frozenset[str]]:
    """A page kind: the path with its numbers left out, and the query's parameter=value pairs (numbers left out)."""
    parts = urlsplit(url)
    pairs = frozenset(re.sub(r"\d+", "N", pair) for pair in parts.query.split("&") if pair)
    return re.sub(r"\d+", "N", parts.path), pairs


def walk(client, start: str = "/", visited: set[str] | None = None) -> tuple[int, list[tuple[int, str]]]:
    """Follow every same-origin GET link from `start`; return (pages seen, [(status, url)] of 5xx).

    A link is followed while its path pattern has been met fewer than PAGE_KINDS_PER_PATTERN times, or when it
    brings a query parameter=value its path has not had yet: every view, profile, task and sort of a page is
    met, without walking their every combination. `visited` collects the URLs walked.
    """
    seen: set[str] = set() if visited is None else visited
    per_path: Counter[str] = Counter()
    pairs_met: dict[str, set[str]] = {}
    queue, failures = deque([start]), []
    while queue and len(seen) < MOST_PAGES:
        url = queue.popleft()
        path, pairs = _kind(url)
        met = pairs_met.setdefault(path, set())
        if url in seen or (per_path[path] >= PAGE_KINDS_PER_PATTERN and pairs <= met):
            continue
        seen.add(url)
        per_path[path] += 1
        met |= pairs
        response = client.get(url)
        if response.status_code >= 500:
            failures.append((response.status_code, url))
        targets = []
        if response.status_code in (301, 302, 303, 307, 308):
            targets.append(response.headers.get("Location", ""))
        elif response.status_code == 200 and response.mimetype == "text/html":
            parser = _Links()
            parser.feed(response.get_data(as_text=True))
            targets += parser.links
        for target in targets:
            parts = urlsplit(urljoin("http://localhost" + url, target))
            if parts.netloc not in ("localhost", "") or parts.scheme not in ("http", ""):
                continue
            link = parts.path + (f"?{parts.query}" if parts.query else "")
            if not link.startswith(NEVER_FOLLOWED) and link not in seen:
                queue.append(link)
    return len(seen), failures


def run_queued_jobs(app) -> list[tuple[str, str]]:
    """Run every queued job inline, as a worker would; return (kind, status) of each."""
    ran = []
    while True:
        with app.app_context():
            job = db.session.scalars(select(Job).where(Job.status == "queued").order_by(Job.id)).first()
            if job is None:
                return ran
            job_id, kind = job.id, job.kind
        execute_job(app, job_id)
        with app.app_context():
            ran.append((kind, db.session.get(Job, job_id).status))


def build_the_readme_instance(app, client, runner, auth, stub, tmp_path) -> None:
    from app.cli.serve import bootstrap

    with app.app_context():
        bootstrap(load_demo=True)  # `python run.py` on an empty database: the demo, scored
    human_eval = require_human_eval()
    # docs/longbench.md's path: LongBench's data files, a model's pred/ and pred_e/ folders and v2's results, in
    # the layouts LongBench's own scripts write (tests/support/longbench_data.py).
    longbench = tmp_path / "longbench"
    write_longbench_data(longbench, datasets=["multifieldqa_zh", "trec"])
    write_longbench_model(longbench, "lb-crawl-7b", datasets=["multifieldqa_zh", "trec"])
    write_longbench_model(longbench, "lb-crawl-7b", e=True, datasets=["trec"])
    write_longbench_v2(longbench, "lb-crawl-7b")
    for args in (["import-leval", str(human_eval)], ["score-metrics"],
                 ["import-lveval", str(write_model(tmp_path / "lveval", "lv-crawl-7b", rows=4))],
                 ["import-longbench", str(longbench)],
                 ["create-user", "alice", "--role", "annotator", "--password-stdin"],
                 ["study", "create", "L-Eval human evaluation", "--questions", "human_eval",
                  "--annotators", "annotator,alice", "--overlap", "2", "--open"]):
        result = runner.invoke(args=args, input="alice-pass-12345\n")
        assert result.exit_code == 0, (args, result.output)

    # Step 3 of the README: one more system uploaded on Predictions and confirmed.
    rows = [json.loads(line) for line in (human_eval / "turbo-16k-0613.pred.jsonl").read_text().splitlines()[:20]]
    mine = [{**{k: v for k, v in row.items() if k != "turbo-16k-0613_pred"},
             "my-model_pred": row["turbo-16k-0613_pred"][::-1]} for row in rows]
    auth.login("researcher")
    upload = post_upload(client, auth, [("my-model.pred.jsonl", "\n".join(json.dumps(r) for r in mine).encode())])
    assert confirm(client, auth, batch_id(upload)).status_code == 302
    auth.logout()

    with app.app_context():
        study = db.session.scalars(select(Study).where(Study.is_demo.is_(False))).one()
        generate_scores(["annotator", "alice"], seed=3, coverage=0.6, study_id=study.id)
        save_settings(base_url=stub.base_url, api_key="sk-crawl-judge-0123456789", model="gpt-4o-mini")
        endpoints.save("lab", base_url=stub.base_url, api_key="sk-crawl-lab-0123456789", may_change=True)
        study_id = study.id
    api = app.test_client()
    api.environ_base["HTTP_AUTHORIZATION"] = "Bearer " + make_token(app, "researcher", "write")
    for path, body in (
        ("/api/v1/judge-runs", {"system": "chatglm2-6b-8k", "baseline": "turbo-16k-0613", "judge_model": "gpt-4o-mini"}),
        ("/api/v1/judge-runs", {"system": "claude-100k", "baseline": "turbo-16k-0613", "judge_model": "gpt-4o-mini",
                                "profile": "evidence"}),
        ("/api/v1/rater-runs", {"study": study_id, "rater_model": "gpt-4o-mini"}),
        ("/api/v1/generation-runs", {"endpoint": "lab", "model": "crawl-model", "question_set": "human_eval"}),
    ):
        response = api.post(path, json={**body, "dry_run": False})
        assert response.status_code == 201, (path, response.get_json())
    ran = run_queued_jobs(app)
    assert {kind for kind, _ in ran} >= {"judge", "rater", "generate", "metrics"}, ran
    assert all(status == "done" for _, status in ran), ran

    result = runner.invoke(args=["study", "create", "Adaptive crawl", "--questions", "human_eval", "--annotators",
                                 "annotator,alice", "--allocation", "adaptive", "--budget-answers", "200", "--open"])
    assert result.exit_code == 0, result.output


def walk_api(app) -> tuple[int, list[tuple[int, str]]]:
    """GET every API route with a read token: each argument filled with every study's and job's id and name."""
    api = app.test_client()
    api.environ_base["HTTP_AUTHORIZATION"] = "Bearer " + make_token(app, "researcher", "read")
    with app.app_context():
        values = [*db.session.execute(select(Study.id, Study.name)).all(), *db.session.execute(select(Job.id, Job.kind)).all()]
    pool = sorted({value for row in values for value in row}, key=str)
    adapter = app.url_map.bind("localhost")
    urls = set()
    for rule in app.url_map.iter_rules():
        if not rule.rule.startswith("/api/v1") or "GET" not in rule.methods:
            continue
        if not rule.arguments:
            urls.add(rule.rule)
            continue
        for value in pool:
            try:
                urls.add(adapter.build(rule.endpoint, {name: value for name in rule.arguments}))
            except Exception:  # a value the argument's converter refuses (a name for an <int:…>)
                continue
    failures = [(response.status_code, url) for url in sorted(urls) if (response := api.get(url)).status_code >= 500]
    return len(urls), failures


def test_the_readme_instance_has_no_page_that_answers_5xx(app, client, runner, auth, stub, tmp_path, monkeypatch):
    monkeypatch.setenv("LEVAL_TOKENIZER", "estimate")  # no tokenizer download for the runs' estimates
    app.config["PROPAGATE_EXCEPTIONS"] = False  # an error is a 500 page, as a person meets it, and the walk goes on
    build_the_readme_instance(app, client, runner, auth, stub, tmp_path)
    walks, admin_saw = {}, set()
    for role in ("admin", "researcher", "annotator"):
        auth.login(role)
        walks[role] = walk(client, visited=admin_saw if role == "admin" else None)
        if role == "admin":  # the demo view: every page again, showing the demo alone
            client.post("/demo-view", data={"show": "1", "csrf_token": auth.token()})
            walks["admin, demo view"] = walk(client)
            client.post("/demo-view", data={"show": "0", "csrf_token": auth.token()})
        auth.logout()
    walks["API"] = walk_api(app)

    failures = {who: bad for who, (_, bad) in walks.items() if bad}
    assert not failures, failures
    pages = {who: count for who, (count, _) in walks.items()}
    assert pages["admin"] > 100 and pages["researcher"] > 80 and pages["annotator"] > 3 and pages["API"] > 20, pages
    # The pages of every benchmark's data were reached by links alone: LV-Eval's and LongBench's tabs, the rows
    # behind a LongBench number, and the system pages that carry their sections.
    for wanted in ("view=lveval", "view=longbench", "/longbench/rows/", "/lveval"):
        assert any(wanted in url for url in admin_saw), wanted
