"""The pointwise LLM rater's pages (under /judge): launch a run on a study with a dry run, runs, versioned prompts."""
from __future__ import annotations

from flask import Blueprint, abort, render_template, request, url_for
from flask_login import current_user
from flask_wtf import FlaskForm
from sqlalchemy import select
from wtforms import (
    FloatField,
    IntegerField,
    SelectChoice,
    SelectField,
    StringField,
    SubmitField,
)
from wtforms.validators import DataRequired, InputRequired, NumberRange, Optional

from app.core.evidence import (
    DEFAULT_CONTEXT_TOKENS,
    DEFAULT_MAX_QUOTES,
    REPLY_TOKENS,
    flagged_scope,
)
from app.core.judge.runner import DEFAULT_CONCURRENCY
from app.extensions import db
from app.models import Job, RaterPrompt, Study
from app.services.judge import load_settings
from app.services.judge.settings import MAX_CONCURRENCY
from app.services.rater import (
    JOB_KIND,
    RaterPromptError,
    RaterRunError,
    RaterSpec,
    create_rater_version,
    current_rater_prompt,
    dry_run,
    launch,
    list_rater_prompts,
    rater_run,
)
from app.services.rater.evidence import NotAnEvidenceRun, rating_quotes
from app.services.rater.job import PROFILES
from app.services.rater.prompts import get_rater_prompt, prompt_for_profile
from app.web.forms import PromptForm, Storable, evidence_fields
from app.web.llm_forms import launch_or_estimate, save_prompt_edit
from app.web.routing import arg_id
from app.web.security import staff_required

bp = Blueprint("rater", __name__)


class RaterForm(FlaskForm, evidence_fields("Rater")):
    study_id = SelectField("Study", coerce=int)
    rater_model = StringField("Rater model", validators=[DataRequired(), Storable(limit=120)])
    profile = SelectField("Profile", choices=[SelectChoice(p, p) for p in PROFILES], default=PROFILES[0])
    prompt_id = SelectField("Prompt version", coerce=int)
    temperature = FloatField("Temperature", default=0.0, validators=[InputRequired(), NumberRange(0, 2)])
    concurrency = IntegerField("Concurrency", default=DEFAULT_CONCURRENCY,
                               validators=[DataRequired(), NumberRange(1, MAX_CONCURRENCY)])
    budget_usd = FloatField("Budget (USD)", validators=[Optional(), NumberRange(min=0.0001)])
    estimate = SubmitField("Estimate (dry run)")
    launch = SubmitField("Rate every answer")

RUNS_SHOWN = 50


def _form() -> RaterForm:
    form = RaterForm()
    studies = list(db.session.scalars(select(Study).order_by(Study.name)))
    form.study_id.choices = [SelectChoice(s.id, s.name) for s in studies]
    form.prompt_id.choices = [SelectChoice(p.id, f"{p.name} v{p.version}") for p in list_rater_prompts()]
    if not form.is_submitted():
        form.rater_model.data = load_settings().model
        form.prompt_id.data = current_rater_prompt().id
        open_studies = [s for s in studies if s.status == "open"]
        if open_studies:
            form.study_id.data = open_studies[0].id
    return form


@bp.route("/rater", methods=["GET", "POST"])
@staff_required
def index():
    form = _form()

    def build() -> RaterSpec:
        prompt_id = prompt_for_profile(form.profile.data, form.prompt_id.data)
        return RaterSpec(form.study_id.data, form.rater_model.data.strip(), prompt_id,
                         float(form.temperature.data), form.profile.data, form.max_quotes.data,
                         form.context_tokens.data, bool(form.json_schema.data))

    def queue(spec: RaterSpec) -> tuple[str, str]:
        job = launch(spec, concurrency=form.concurrency.data, budget_usd=form.budget_usd.data, user_id=current_user.id)
        return f"Rater run #{job.id} queued.", url_for("rater.run", job_id=job.id)

    done, estimate = launch_or_estimate(form, build, queue=queue, estimate=dry_run, refused=RaterRunError,
                                        duplicate_url=lambda job: url_for("rater.run", job_id=job.id))
    if done is not None:
        return done
    jobs = list(db.session.scalars(select(Job).where(Job.kind == JOB_KIND).order_by(Job.id.desc()).limit(RUNS_SHOWN)))
    studies = {s.id: s for s in db.session.scalars(select(Study))}
    prompts = {p.id: p for p in db.session.scalars(select(RaterPrompt))}
    return render_template("rater/index.html", form=form, estimate=estimate, jobs=jobs, studies=studies,
                           prompts=prompts, rater_prompts=list_rater_prompts(),
                           evidence_defaults={"max_quotes": DEFAULT_MAX_QUOTES, "context_tokens": DEFAULT_CONTEXT_TOKENS,
                                              "reply_tokens": REPLY_TOKENS})


LEAVE_OUT = "out"  # ?flagged=out: the one switch that leaves flagged ratings out of every number


@bp.get("/rater/runs/<int:job_id>/quotes")
@staff_required
def quotes(job_id: int):
    answer_id = arg_id("answer")
    if answer_id is None:
        abort(404)
    try:
        rating = rating_quotes(job_id, answer_id)
    except NotAnEvidenceRun:
        abort(404)
    return render_template("rater/quotes.html", rating=rating, document=rating["document"],
                           pane_url=url_for("authoring.pane", document_id=rating["document"].id))


@bp.get("/rater/runs/<int:job_id>")
@staff_required
def run(job_id: int):
    leave_out = request.args.get("flagged") == LEAVE_OUT
    found = rater_run(job_id, leave_out_flagged=leave_out)
    if found is None:
        abort(404)
    return render_template("rater/run.html", run=found, job=found.job, spec=found.spec, result=found.job.result or {},
                           report=found.evidence, leave_out=leave_out,
                           flagged_note=flagged_scope("ratings", left_out=leave_out))


@bp.route("/rater/prompts/<int:prompt_id>", methods=["GET", "POST"])
@staff_required
def prompt(prompt_id: int):
    base = get_rater_prompt(prompt_id)
    if base is None:
        abort(404)
    form = PromptForm()
    saved = save_prompt_edit(form, base, create=create_rater_version, refused=RaterPromptError,
                             saved_url=lambda created: url_for("rater.prompt", prompt_id=created.id))
    if saved is not None:
        return saved
    return render_template("rater/prompt.html", prompt=base, form=form)
