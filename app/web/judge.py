"""Judge pages: runs, launching with a dry run, run reports, settings and prompt versions."""
from __future__ import annotations

from flask import (
    Blueprint,
    abort,
    flash,
    jsonify,
    redirect,
    render_template,
    request,
    url_for,
)
from flask_login import current_user
from flask_wtf import FlaskForm
from markupsafe import Markup
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
    TextAreaField,
)
from wtforms.validators import (
    DataRequired,
    InputRequired,
    Length,
    NumberRange,
    Optional,
)

from app.core.evidence import (
    DEFAULT_CONTEXT_TOKENS,
    DEFAULT_MAX_QUOTES,
    REPLY_TOKENS,
    flagged_scope,
)
from app.core.judge import LEVAL_INSTRUCTION
from app.core.judge.profiles import DEFAULT as DEFAULT_PROFILE
from app.core.judge.profiles import DIFFERENCES, SHARED_DEVIATIONS
from app.core.judge.profiles import PROFILES as JUDGE_PROFILES
from app.core.judge.runner import DEFAULT_CONCURRENCY
from app.extensions import db
from app.models import Job, JudgePrompt, System
from app.services.judge import (
    JOB_KIND,
    SCOPES,
    JudgeRunError,
    PairError,
    PromptError,
    RunSpec,
    SettingsError,
    create_version,
    current_prompt,
    default_baseline,
    dry_run,
    judge_jobs,
    launch,
    list_prompts,
    load_settings,
    run_report,
    save_settings,
    win_rates,
)
from app.services.judge.bias import ALL_TASKS, run_bias
from app.services.judge.pairs import DEFAULT_SCOPE
from app.services.judge.prompt_versions import (
    get_prompt,
    is_fixed,
    prompt_for_run,
)
from app.services.judge.reports import judgment_quotes
from app.services.judge.settings import (
    MAX_CONCURRENCY,
    EndpointChangeNotAllowed,
    prices_as_json,
)
from app.services.llm.endpoints import JUDGE_ENDPOINT, stored_base_url
from app.web.forms import PromptForm, Storable, evidence_fields
from app.web.llm_forms import launch_or_estimate, save_prompt_edit
from app.web.routing import arg_id
from app.web.security import staff_required

bp = Blueprint("judge", __name__)


class LaunchForm(FlaskForm, evidence_fields("Judge")):
    system = SelectField("System under test", validators=[DataRequired()])
    baseline = SelectField("Baseline", validators=[DataRequired()])
    scope = SelectField("Questions", choices=[SelectChoice(k, v) for k, v in SCOPES.items()], default=DEFAULT_SCOPE)
    judge_model = StringField("Judge model", validators=[DataRequired(), Storable(limit=120)])
    profile = SelectField("Profile", choices=[SelectChoice(k, p.label) for k, p in JUDGE_PROFILES.items()],
                          default=DEFAULT_PROFILE)
    prompt_id = SelectField("Prompt version", coerce=int)
    temperature = FloatField("Temperature", default=0.0, validators=[InputRequired(), NumberRange(0, 2)])
    concurrency = IntegerField("Concurrency", default=DEFAULT_CONCURRENCY,
                               validators=[DataRequired(), NumberRange(1, MAX_CONCURRENCY)])
    budget_usd = FloatField("Budget (USD)", validators=[Optional(), NumberRange(min=0.0001)])
    estimate = SubmitField("Estimate (dry run)")
    launch = SubmitField("Launch")


class SettingsForm(FlaskForm):
    base_url = StringField("Base URL", validators=[Optional(), Length(max=500)])
    api_key = PasswordField("API key", validators=[Optional(), Length(max=500)])
    clear_api_key = BooleanField("Remove the saved key")
    model = StringField("Default judge model", validators=[Optional(), Length(max=120)])
    baseline = SelectField("Default baseline", validate_choice=False)
    max_retries = IntegerField("Retries per call", validators=[InputRequired(), NumberRange(0, 20)])
    timeout_s = FloatField("Timeout per call (s)", validators=[InputRequired(), NumberRange(0.1, 3600)])
    prices = TextAreaField("Prices (USD per 1M tokens)", validators=[DataRequired()])
    submit = SubmitField("Save settings")


RUNS_SHOWN = 100


def _system_names() -> list[str]:
    return list(db.session.scalars(select(System.name).order_by(System.name)))


def _launch_form() -> LaunchForm:
    form = LaunchForm()
    names = _system_names()
    form.system.choices = [SelectChoice(n) for n in names]
    form.baseline.choices = [SelectChoice(n) for n in names]
    prompts = list_prompts()
    form.prompt_id.choices = [SelectChoice(str(p.id), f"{p.name} v{p.version}") for p in prompts]
    if not form.is_submitted():
        baseline = default_baseline() or (names[1] if len(names) > 1 else None)
        form.baseline.data = baseline
        form.system.data = next((n for n in names if n != baseline), None)
        form.judge_model.data = load_settings().model
        form.prompt_id.data = current_prompt().id
    return form


def _spec(form: LaunchForm) -> RunSpec:
    profile = form.profile.data
    prompt_id = prompt_for_run(profile, form.prompt_id.data)
    return RunSpec(system=form.system.data, baseline=form.baseline.data, judge_model=form.judge_model.data.strip(),
                   prompt_id=prompt_id, temperature=float(form.temperature.data), scope=form.scope.data,
                   profile=profile, max_quotes=form.max_quotes.data, context_tokens=form.context_tokens.data,
                   json_schema=bool(form.json_schema.data))


@bp.route("/", methods=["GET", "POST"])
@staff_required
def index():
    form = _launch_form()

    def queue(spec: RunSpec) -> tuple[str, str]:
        job = launch(spec, concurrency=form.concurrency.data, budget_usd=form.budget_usd.data, user_id=current_user.id)
        return f"Judge run #{job.id} queued.", url_for("judge.run", job_id=job.id)

    done, estimate = launch_or_estimate(form, lambda: _spec(form), queue=queue, estimate=dry_run,
                                        refused=JudgeRunError,
                                        duplicate_url=lambda job: url_for("judge.run", job_id=job.id))
    if done is not None:
        return done
    jobs = judge_jobs(limit=RUNS_SHOWN)
    prompts = {p.id: p for p in db.session.scalars(select(JudgePrompt))}
    return render_template("judge/index.html", form=form, estimate=estimate, jobs=jobs, prompts=prompts,
                           evidence_defaults={"max_quotes": DEFAULT_MAX_QUOTES, "context_tokens": DEFAULT_CONTEXT_TOKENS,
                                              "reply_tokens": REPLY_TOKENS},
                           flagged_included=flagged_scope("judgments", left_out=False),
                           scopes=SCOPES, settings=load_settings(), profiles=JUDGE_PROFILES, differences=DIFFERENCES,
                           shared_deviations=SHARED_DEVIATIONS)


@bp.get("/runs/<int:job_id>")
@staff_required
def run(job_id: int):
    job = db.session.get(Job, job_id)
    if job is None or job.kind != JOB_KIND:
        abort(404)
    spec = RunSpec.from_params(job.params)
    report, problem = None, None
    # ?flagged=out: the evidence profile's one switch that leaves flagged judgments out of every number.
    leave_out = request.args.get("flagged") == "out"
    try:
        report = run_report(spec, leave_out_flagged=leave_out)
    except PairError as exc:
        problem = str(exc)
    stale = report is not None and report.fingerprint != job.params.get("fingerprint")
    return render_template("judge/run.html", job=job, spec=spec, report=report, problem=problem, stale=stale,
                           result=job.result or {}, scopes=SCOPES, settings=load_settings(),
                           profile=spec.judge_profile, flagged_note=flagged_scope("judgments", left_out=leave_out))


@bp.get("/runs/<int:job_id>/quotes")
@staff_required
def quotes(job_id: int):
    """An evidence judgment's quotes in the document pane: ?question=<id>&order=AB|BA."""
    job = db.session.get(Job, job_id)
    question_id = arg_id("question")
    if job is None or job.kind != JOB_KIND or question_id is None:
        abort(404)
    try:
        judgment = judgment_quotes(RunSpec.from_params(job.params), question_id, request.args.get("order", "AB"))
    except PairError:
        judgment = None
    if judgment is None:
        abort(404)
    return render_template("judge/quotes.html", job=job, spec=RunSpec.from_params(job.params), judgment=judgment,
                           document=judgment["document"],
                           pane_url=url_for("authoring.pane", document_id=judgment["document"].id))


@bp.get("/runs/<int:job_id>/bias")
@staff_required
def bias(job_id: int):
    job = db.session.get(Job, job_id)
    if job is None or job.kind != JOB_KIND:
        abort(404)
    spec = RunSpec.from_params(job.params)
    try:
        probes = run_bias(spec)
    except PairError as exc:
        return render_template("judge/bias.html", job=job, spec=spec, probes=None, problem=str(exc),
                               profile=spec.judge_profile)
    return render_template("judge/bias.html", job=job, spec=spec, probes=probes, problem=None,
                           profile=spec.judge_profile, charts=bias_charts(probes), all_tasks_label=ALL_TASKS)


@bp.get("/win-rates.json")
@staff_required
def win_rates_json():
    names = request.args.getlist("system") or None
    return jsonify(win_rates(names, baseline=request.args.get("baseline") or None))


@bp.route("/settings", methods=["GET", "POST"])
@staff_required
def settings():
    current = load_settings()
    form = SettingsForm()
    form.baseline.choices = [SelectChoice("", "turbo-16k-0613 when imported"),
                             *(SelectChoice(n) for n in _system_names())]
    is_admin = current_user.role == "admin"
    status = 200
    if form.validate_on_submit():
        try:
            key_removed = save_settings(
                base_url=(form.base_url.data or "") if "base_url" in request.form else None,
                api_key=form.api_key.data or None, clear_api_key=form.clear_api_key.data,
                model=form.model.data or "", baseline=form.baseline.data or "", max_retries=form.max_retries.data,
                timeout_s=form.timeout_s.data, prices_json=form.prices.data, may_change_endpoint=is_admin)
        except SettingsError as exc:
            flash(str(exc), "error")
            status = 403 if isinstance(exc, EndpointChangeNotAllowed) else 400
        else:
            flash("Judge settings saved.", "info")
            if key_removed:
                flash("The saved API key was removed because the base URL changed: enter the key again "
                      "to use it with the new address.", "warning")
            return redirect(url_for("judge.settings"))
    elif form.is_submitted():
        flash("Check the highlighted fields.", "error")
    else:
        form.base_url.data = stored_base_url(JUDGE_ENDPOINT)
        form.model.data = current.model
        form.baseline.data = current.baseline
        form.max_retries.data = current.max_retries
        form.timeout_s.data = current.timeout_s
        form.prices.data = prices_as_json(current.prices)
    return render_template("judge/settings.html", form=form, settings=current, is_admin=is_admin), status


@bp.get("/prompts")
@staff_required
def prompts():
    return render_template("judge/prompts.html", prompts=list_prompts(), instruction=LEVAL_INSTRUCTION,
                           current=current_prompt(),
                           fixed_names={p.template.name for p in JUDGE_PROFILES.values() if p.template is not None})


@bp.route("/prompts/<int:prompt_id>", methods=["GET", "POST"])
@staff_required
def prompt(prompt_id: int):
    base = get_prompt(prompt_id)
    if base is None:
        abort(404)
    form = PromptForm()
    saved = save_prompt_edit(form, base, create=create_version, refused=PromptError,
                             saved_url=lambda created: url_for("judge.prompt", prompt_id=created.id))
    if saved is not None:
        return saved
    return render_template("judge/prompt.html", prompt=base, form=form, instruction=LEVAL_INSTRUCTION,
                           has_instruction=LEVAL_INSTRUCTION in base.system_text + base.user_template,
                           fixed=is_fixed(base))


def bias_charts(probes) -> dict[str, Markup]:
    """Server-rendered SVG: P(longer wins) and the length-controlled win rate per task, with intervals.

    The chart function escapes every label itself, so its output is marked safe here, never in a template.
    """
    from app.core.charts import mean_ci_chart

    rows = [(ALL_TASKS, probes.overall), *probes.by_task.items()]

    def pct(value):
        return None if value is None else 100.0 * value

    longer = [(task, pct(p.longer_wins.share), pct(p.longer_wins.low), pct(p.longer_wins.high)) for task, p in rows]
    controlled = [(task, p.length_controlled.lc_win_rate, p.length_controlled.ci_low, p.length_controlled.ci_high)
                  for task, p in rows]
    return {
        "longer": Markup(mean_ci_chart(longer, "P(longer answer wins) among decided pairs, % with 95% Wilson interval",
                                       value_range=(0, 100), identifier="bias-longer")),
        "lc": Markup(mean_ci_chart(controlled, "Length-controlled win rate, % with 95% bootstrap interval",
                                   value_range=(0, 100), identifier="bias-lc")),
    }
