"""Generation pages: endpoints, launching runs with a dry run, run manifests and downloads, comparing runs, prompts."""
from __future__ import annotations

from flask import (
    Blueprint,
    abort,
    flash,
    redirect,
    render_template,
    request,
    url_for,
)
from flask_login import current_user
from flask_wtf import FlaskForm
from sqlalchemy import select
from wtforms import (
    BooleanField,
    FloatField,
    IntegerField,
    PasswordField,
    SelectChoice,
    SelectField,
    StringField,
    SubmitField,
)
from wtforms.validators import DataRequired, InputRequired, NumberRange, Optional

from app.core.generation import manifest as manifests
from app.core.generation.prompts import LENGTH_WORDINGS, SYSTEM_KEYS, TEMPLATE_KEYS
from app.extensions import db
from app.models import GenerationCall, GenerationRun, Job
from app.services.generation import prompt_versions, runs, store
from app.services.generation.spec import (
    MAX_CONCURRENCY,
    TRUNCATIONS,
    GenerationError,
    RunSpec,
    spec_for_endpoint,
)
from app.services.llm import endpoints
from app.services.question_sets import available_sets
from app.web.downloads import attachment
from app.web.forms import Storable
from app.web.llm_forms import launch_or_estimate
from app.web.routing import arg_id
from app.web.security import roles_required, staff_required

bp = Blueprint("generation", __name__)


class LaunchForm(FlaskForm):
    endpoint = SelectField("Endpoint", validators=[DataRequired()])
    model = StringField("Model", validators=[DataRequired(), Storable(column=GenerationCall.model)])
    question_set = SelectField("Questions", validators=[DataRequired()])
    system_name = StringField("Store as system", validators=[Optional(), Storable(column=GenerationRun.system_name)])
    existing_system = BooleanField("Store as new answer versions of this existing system")
    length_instruction = BooleanField("Length instruction (\"around N words\", N = the reference's words)")
    context_tokens = IntegerField("Context window (tokens)", default=16000,
                                  validators=[InputRequired(), NumberRange(1, 10_000_000)])
    max_tokens = IntegerField("Max answer tokens", default=512, validators=[InputRequired(), NumberRange(1, 1_000_000)])
    temperature = FloatField("Temperature", default=0.0001, validators=[InputRequired(), NumberRange(0, 2)])
    seed = IntegerField("Seed", validators=[Optional()])
    truncation = SelectField("Truncation", choices=[SelectChoice(t) for t in TRUNCATIONS], default="leval")
    prompt_id = SelectField("Prompt version", coerce=int)
    concurrency = IntegerField("Concurrency", default=8, validators=[InputRequired(), NumberRange(1, MAX_CONCURRENCY)])
    budget_usd = FloatField("Budget (USD)", validators=[Optional(), NumberRange(min=0.000001)])
    estimate = SubmitField("Estimate (dry run)")
    launch = SubmitField("Start")


class EndpointForm(FlaskForm):
    """An admin's named endpoint: a base URL and the key that belongs to it."""

    name = StringField("Name", validators=[DataRequired(), Storable(limit=32)])
    base_url = StringField("Base URL", validators=[DataRequired(), Storable(limit=500)])
    api_key = PasswordField("API key", validators=[Optional(), Storable(limit=500)])
    clear_api_key = BooleanField("Remove the saved key")
    save = SubmitField("Save endpoint")
    remove = SubmitField("Remove endpoint")


RUNS_SHOWN = 100


def _form() -> tuple[LaunchForm, list[dict]]:
    form = LaunchForm()
    sets = available_sets()
    form.question_set.choices = [SelectChoice(s["name"], f"{s['label']} ({s['count']}"
                                               + (f" of L-Eval's {s['expected']})" if s["expected"] else ")"))
                                  for s in sets]
    form.prompt_id.choices = [SelectChoice(p.id, f"{p.name} v{p.version}") for p in prompt_versions.list_versions()]
    form.endpoint.choices = [SelectChoice(e.name, e.label) for e in endpoints.configured()]
    if not form.is_submitted():
        form.prompt_id.data = prompt_versions.current().id
        form.question_set.data = "human_eval"
    return form, sets


def _spec(form: LaunchForm) -> RunSpec:
    return spec_for_endpoint(
        form.endpoint.data, model=form.model.data, system_name=form.system_name.data or "",
        question_set=form.question_set.data, prompt_id=form.prompt_id.data,
        length_instruction=bool(form.length_instruction.data), context_tokens=form.context_tokens.data,
        max_tokens=form.max_tokens.data, temperature=float(form.temperature.data), seed=form.seed.data,
        truncation=form.truncation.data, concurrency=form.concurrency.data, budget_usd=form.budget_usd.data,
        existing_system=bool(form.existing_system.data),
    )


def _runs() -> list[tuple[GenerationRun, Job | None]]:
    rows = db.session.execute(select(GenerationRun, Job).outerjoin(Job, GenerationRun.job_id == Job.id)
                              .order_by(GenerationRun.id.desc()).limit(RUNS_SHOWN))
    return [(run, job) for run, job in rows]


@bp.route("/", methods=["GET", "POST"])
@staff_required
def index():
    form, sets = _form()

    def queue(spec: runs.RunSpec) -> tuple[str, str]:
        run, job = runs.launch(spec, user_id=current_user.id)
        return f"Generation run #{run.id} queued as job #{job.id}.", url_for("generation.run", run_id=run.id)

    done, estimate = launch_or_estimate(form, lambda: _spec(form), queue=queue, estimate=runs.dry_run,
                                        refused=GenerationError, duplicate_url=lambda job: None)
    if done is not None:
        return done
    return render_template("generation/index.html", form=form, sets=sets, estimate=estimate, runs=_runs())


@bp.get("/endpoints")
@staff_required
def endpoint_list():
    return render_template("generation/endpoints.html", endpoints=endpoints.configured(), form=EndpointForm(),
                           is_admin=current_user.role == "admin")


@bp.post("/endpoints")
@roles_required("admin")
def endpoint_save():
    form = EndpointForm()
    status = 400
    if form.validate_on_submit():
        try:
            name = endpoints.check_name(form.name.data)
            if name == endpoints.JUDGE_ENDPOINT:
                raise endpoints.SettingsError("endpoint name: the judge's endpoint is set on Judge → Settings")
            if form.remove.data:
                endpoints.remove(name, may_change=True)
                flash(f"Endpoint {name} removed with its key.", "info")
            else:
                dropped = endpoints.save(name, base_url=form.base_url.data, api_key=form.api_key.data or None,
                                         clear_api_key=form.clear_api_key.data, may_change=True)
                flash(f"Endpoint {name} saved.", "info")
                if dropped:
                    flash("Its saved API key was removed because the base URL changed: enter the key again "
                          "to use it with the new address.", "warning")
            return redirect(url_for("generation.endpoint_list"))
        except endpoints.SettingsError as exc:
            flash(str(exc), "error")
    else:
        flash("Check the highlighted fields.", "error")
    return render_template("generation/endpoints.html", endpoints=endpoints.configured(), form=form,
                           is_admin=True), status


def _run_or_404(run_id: int) -> GenerationRun:
    run = db.session.get(GenerationRun, run_id)
    if run is None:
        abort(404)
    return run


@bp.get("/runs/<int:run_id>")
@staff_required
def run(run_id: int):
    run = _run_or_404(run_id)
    job = db.session.get(Job, run.job_id) if run.job_id else None
    others = [r for r, _ in _runs() if r.id != run.id]
    return render_template("generation/run.html", run=run, job=job, others=others,
                           fields=manifests.flatten({k: v for k, v in run.manifest.items() if k != manifests.CUTS_KEY}),
                           cuts=run.manifest.get(manifests.CUTS_KEY, []))


@bp.get("/runs/<int:run_id>/download")
@staff_required
def download(run_id: int):
    name, text, _, _ = store.pred_file(_run_or_404(run_id))
    return attachment(text, name, "jsonl")


@bp.get("/compare")
@staff_required
def compare():
    sides = [arg_id(side) for side in ("a", "b")]
    if None in sides:
        abort(400)
    left, right = map(_run_or_404, sides)
    differences = manifests.compare(left.manifest, right.manifest)
    return render_template("generation/compare.html", left=left, right=right, differences=differences)


@bp.get("/prompts")
@staff_required
def prompts():
    return render_template("generation/prompts.html", versions=prompt_versions.list_versions(),
                           current=prompt_versions.current())


@bp.route("/prompts/<int:prompt_id>", methods=["GET", "POST"])
@staff_required
def prompt(prompt_id: int):
    base = prompt_versions.get(prompt_id)
    if base is None:
        abort(404)
    content = base.content
    if request.method == "POST":
        systems = {k: request.form.get(f"system-{k}", "") for k in SYSTEM_KEYS}
        templates = {k: request.form.get(f"template-{k}", "") for k in TEMPLATE_KEYS}
        try:
            created = prompt_versions.create_version(base, systems, templates, user_id=current_user.id)
        except prompt_versions.PromptError as exc:
            flash(str(exc), "error")
            content = {**content, "systems": systems, "templates": templates}
        else:
            flash(f"Saved {created.name} v{created.version}; v{base.version} is unchanged.", "info")
            return redirect(url_for("generation.prompt", prompt_id=created.id))
    return render_template("generation/prompt.html", prompt=base, content=content, system_keys=SYSTEM_KEYS,
                           template_keys=TEMPLATE_KEYS, wordings=LENGTH_WORDINGS)
