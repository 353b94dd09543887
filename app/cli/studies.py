"""Study commands: `study list|create|show|open|close|pin|delete`, and deleting systems, uploads and the demo."""
from __future__ import annotations

import json

import click
from flask.cli import with_appcontext
from sqlalchemy import select

from app.cli.database import DB_ID, upgrade_database
from app.extensions import db
from app.models import PredictionFile, Study, System, User
from app.services import deletion
from app.services.annotation.oversight import study_overview
from app.services.studies import setup
from app.services.studies.answers import pin_latest
from app.services.studies.lookup import NoStudy, find_study, require_study, study_rows


def command_study(name: str | None = None, study_id: int | None = None) -> Study:
    """The study of `--study NAME` (always a name) or `--study-id ID` (always an id), or the default one; else a
    usage error that lists the studies."""
    if name is not None and study_id is not None:
        raise click.UsageError("give --study NAME or --study-id ID, not both")
    try:
        return require_study(study_id=study_id, name=name)
    except NoStudy as exc:
        raise click.UsageError(f"{exc} (give --study NAME or --study-id ID)") from None


def named_study(name: str) -> Study:
    """The study a command's NAME argument names: always a name, never read as an id."""
    study = find_study(name=name)
    if study is None:
        raise click.BadParameter(f"no study named {name!r} (NAME is a study's name: python run.py study list "
                                 "shows them)", param_hint="NAME")
    return study


def _names(model, column, names: str, what: str) -> list[int]:
    wanted = [name.strip() for name in names.split(",") if name.strip()]
    found = dict(db.session.execute(select(column, model.id).where(column.in_(wanted))).all())
    missing = [name for name in wanted if name not in found]
    if missing:
        raise click.BadParameter(f"no {what} named {', '.join(missing)}")
    return [found[name] for name in wanted]


def _annotators(names: str) -> list[int]:
    """--annotators as user ids; naming nobody is refused (it must not read as "every account")."""
    ids = _names(User, User.username, names, "user")
    if not ids:
        raise click.BadParameter("names nobody: give at least one username, or leave --annotators out so that "
                                 "every account may score", param_hint="--annotators")
    return ids


@click.group("study")
def study_group() -> None:
    """Studies: blind human-evaluation campaigns."""


@study_group.command("list")
@with_appcontext
@click.option("--json", "as_json", is_flag=True)
def list_command(as_json: bool) -> None:
    """List the studies with their sizes."""
    upgrade_database()
    rows = [{"id": r.study.id, "name": r.study.name, "status": r.study.status, "demo": r.study.is_demo,
             "questions": r.questions, "systems": r.systems, "answers": r.answers,
             "annotators": "everyone" if r.study.everyone_may_score else r.annotators, "overlap": r.study.overlap, "scores": r.scores}
            for r in study_rows()]
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    for row in rows:
        click.echo(f"{row['id']:>4}  {row['name']}  [{row['status']}]  {row['questions']} questions, "
                   f"{row['systems']} systems, {row['answers']} answers, {row['scores']} scores")
    if not rows:
        click.echo("No study yet: python run.py study create NAME")


@study_group.command("create")
@with_appcontext
@click.argument("name")
@click.option("--questions", default="human_eval", show_default=True,
              help="human_eval, demo, gpt4, gpt35, authored (researchers' new pairs), task:<name>, "
              "auto:<name>, study:<id> or ids:<id,id,…>.")
@click.option("--systems", default=None, help="Comma-separated system names (default: every system answering).")
@click.option("--annotators", default=None,
              help="Comma-separated usernames, at least one (left out: every account may score).")
@click.option("--overlap", type=click.IntRange(min=1), default=None, help="Annotators per answer (default: all).")
@click.option("--references", default="human,gpt4-32k,claude-100k", show_default=True,
              help="Reference kinds annotators see.")
@click.option("--policy", type=click.Choice(["hide", "show", "exclude"]), default="hide", show_default=True,
              help="When an answer repeats a shown reference: hide it there, show it, or leave the system out.")
@click.option("--description", default="")
@click.option("--open", "open_now", is_flag=True, help="Open the study at once (default: a draft).")
@click.option("--allocation", type=click.Choice(["fixed", "adaptive"]), default="fixed", show_default=True,
              help="fixed: every document, with its questions, to --overlap annotators; adaptive: the server gives each annotator the "
              "document, questions and answers that still change the ranking, within a budget.")
@click.option("--budget-documents", type=click.IntRange(min=1), default=None,
              help="Adaptive: the most documents read (one per annotator and document).")
@click.option("--budget-answers", type=click.IntRange(min=1), default=None, help="Adaptive: the most answers scored.")
@click.option("--budget-hours", type=click.FloatRange(min=0, min_open=True), default=None,
              help="Adaptive: the most annotator-hours of active scoring time.")
@click.option("--min-per-answer", type=click.IntRange(min=1), default=None,
              help="Adaptive: every answer scored at all is scored by at least this many annotators (default 1).")
@click.option("--tie-margin", type=click.FloatRange(min=0, min_open=True), default=None,
              help="Adaptive: two systems whose difference is shown to lie within ±X points count as tied.")
@click.option("--calibration-documents", type=click.IntRange(min=1, max=2), default=None,
              help="Adaptive: documents every annotator reads first, to learn how reliably they read (default 1).")
@click.option("--start-window-hours", type=click.FloatRange(min=0, min_open=True), default=None,
              help="Adaptive: until every listed annotator has calibrated, or this many hours after the first "
              "document given, nobody gets more than one document beyond calibration (default: until they all have).")
@click.option("--max-documents-per-annotator", type=click.IntRange(min=1), default=None,
              help="Adaptive: the most documents one annotator is given (default: no cap).")
@click.option("--separate-identical", is_flag=True,
              help="Show identical answers of several systems apart, each scored by itself (default: shown once, "
              "the one score recorded for each system).")
def create_command(name: str, questions: str, systems: str | None, annotators: str | None, overlap: int | None,
                   references: str, policy: str, description: str, open_now: bool, allocation: str,
                   budget_documents: int | None, budget_answers: int | None, budget_hours: float | None,
                   min_per_answer: int | None, tie_margin: float | None, calibration_documents: int | None,
                   start_window_hours: float | None, max_documents_per_annotator: int | None,
                   separate_identical: bool) -> None:
    """Create a study, pinning every system's current answers."""
    upgrade_database()
    try:
        spec = setup.StudySpec(
            name=name, description=description, question_ids=setup.questions_for(questions),
            system_ids=_names(System, System.name, systems, "system") if systems else None,
            annotator_ids=None if annotators is None else _annotators(annotators),
            overlap=overlap, reference_kinds=[k.strip() for k in references.split(",") if k.strip()],
            reference_policy=policy, status="open" if open_now else "draft", allocation=allocation,
            budget_documents=budget_documents, budget_answers=budget_answers, budget_hours=budget_hours,
            min_per_answer=min_per_answer, tie_margin=tie_margin, calibration_documents=calibration_documents,
            start_window_hours=start_window_hours, max_documents_per_annotator=max_documents_per_annotator,
            merge_identical=not separate_identical,
        )
        study = setup.create_study(spec)
    except setup.StudyError as exc:
        db.session.rollback()
        raise click.ClickException(str(exc)) from None
    click.echo(f"Created study '{study.name}' (id {study.id}, {study.status}).")
    _echo_checks(study)


def _echo_checks(study: Study) -> None:
    overview = study_overview(study)
    for system, counts in overview.detection.by_system().items():
        click.echo(f"  {system} repeats references: " + ", ".join(f"{what} × {n}" for what, n in counts.items()))
    for kind, n in overview.hidden.items():
        click.echo(f"  hidden: {kind} reference on {n} question(s)")


@study_group.command("show")
@with_appcontext
@click.argument("name")
@click.option("--json", "as_json", is_flag=True)
def show_command(name: str, as_json: bool) -> None:
    """Show a study: systems, references, annotators, progress."""
    upgrade_database()
    study = named_study(name)
    o = study_overview(study)
    data = {
        "id": study.id, "name": study.name, "status": study.status, "description": study.description,
        "demo": study.is_demo, "questions": o.questions, "overlap": study.overlap,
        "reference_kinds": study.reference_kinds, "reference_policy": study.reference_policy,
        "systems": [{"name": s.name, "in_study": s.in_study, "answers": s.answers, "scores": s.scores,
                     "stale_scores": s.stale} for s in o.systems],
        "newer_answers": [{"system": d.system, "answers": d.answers, "scores_that_would_go_stale": d.scores}
                          for d in o.outdated],
        "reference_repeats": o.detection.by_system(), "hidden_references": o.hidden,
        "identical_answers_across_systems": [{"question_id": q, "systems": names}
                                             for q, names in o.detection.shared_answers],
        "identical_answers_shown_once": study.merge_identical,
        "annotators": "everyone" if study.everyone_may_score else [u.username for u in o.annotators],
        "progress": [{"annotator": p.username, "round": p.round_number, "done": p.done, "total": p.total}
                     for p in o.progress],
        "allocation": study.allocation,
    }
    if o.allocation is not None:
        data["adaptive"] = o.allocation.to_dict()
    if as_json:
        click.echo(json.dumps(data, indent=2, ensure_ascii=False))
        return
    click.echo(f"{study.name} [{study.status}]: {o.questions} questions, overlap "
               f"{study.overlap if study.overlap is not None else 'everyone'}")
    for s in data["systems"]:
        click.echo(f"  {'*' if s['in_study'] else ' '} {s['name']}: {s['answers']} answers, {s['scores']} scores"
                   f"{', %d stale' % s['stale_scores'] if s['stale_scores'] else ''}")
    for d in data["newer_answers"]:
        click.echo(f"  newer answers: {d['system']} ({d['answers']}); pinning makes {d['scores_that_would_go_stale']} "
                   "score(s) stale")
    for p in data["progress"]:
        click.echo(f"  {p['annotator']}: {p['done']} of {p['total']} (round {p['round']})")
    if o.allocation is not None:
        a = o.allocation
        click.echo(f"  adaptive: {'settled' if a.settled else a.stopped or 'not settled yet'}; spent "
                   f"{a.spent.documents} documents, {a.spent.answers} answers given, {a.spent.hours:.2f} h "
                   f"(budget {a.budget['documents']} documents, {a.budget['answers']} answers, {a.budget['hours']} h)")
        for pair in a.pairs:
            left = ("" if pair.state != "open" else
                    f", about {pair.documents_left} documents / {pair.answers_left} answers left"
                    if pair.questions_left is not None else ", too little data to estimate")
            click.echo(f"    {pair.higher} > {pair.lower}: {pair.state} ({pair.n_questions} common questions{left})")


def _set_status(name: str, status: str) -> None:
    upgrade_database()
    study = named_study(name)
    try:
        setup.set_status(study, status)
        db.session.commit()
    except setup.StudyError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"{study.name} is {study.status}.")


@study_group.command("open")
@with_appcontext
@click.argument("name")
def open_command(name: str) -> None:
    """Open a study to its annotators."""
    _set_status(name, "open")


@study_group.command("close")
@with_appcontext
@click.argument("name")
def close_command(name: str) -> None:
    """Close a study: annotators no longer see it; results stay."""
    _set_status(name, "closed")


@study_group.command("identical")
@with_appcontext
@click.argument("name")
@click.argument("how", type=click.Choice(["once", "apart"]))
def identical_command(name: str, how: str) -> None:
    """Show identical answers of several systems once (the score recorded for each) or apart; before any score."""
    upgrade_database()
    study = command_study(name)
    try:
        twins = setup.set_merge_identical(study, how == "once")
        db.session.commit()
    except setup.StudyError as exc:
        db.session.rollback()
        raise click.ClickException(str(exc)) from None
    click.echo(f"{study.name} shows identical answers {how}" + (f": {twins} answer(s) through another." if twins
                                                              else "."))


@study_group.command("pin")
@with_appcontext
@click.argument("name")
@click.option("--system", "system_name", required=True)
@click.option("--latest", is_flag=True, required=True, help="Move to the system's newest answer texts.")
@click.option("--dry-run", is_flag=True, help="Only say what would change.")
def pin_command(name: str, system_name: str, latest: bool, dry_run: bool) -> None:
    """Show a system's newest answers in a study; say how many scores go stale."""
    upgrade_database()
    study = named_study(name)
    system = db.session.scalars(select(System).where(System.name == system_name)).first()
    if system is None:
        raise click.BadParameter(f"no system named {system_name}")
    report = pin_latest(study.id, system.id, dry_run=dry_run)
    if not dry_run:
        db.session.commit()
    click.echo(("Would move " if dry_run else "") + report.describe())


def _delete(plan: deletion.DeletionPlan, carry_out, yes: bool, force: bool) -> None:
    click.echo(plan.describe())
    if plan.scores and not force:
        raise click.ClickException("those human scores would be lost: add --force (they are exported first)")
    if not yes:
        click.confirm("Delete?", abort=True)
    saved = carry_out(force)
    click.echo(f"Deleted {plan.what}." + (f" Human scores saved to {saved}." if saved else ""))


@study_group.command("delete")
@with_appcontext
@click.argument("name")
@click.option("--force", is_flag=True, help="Also delete its human scores (exported first).")
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
def delete_command(name: str, force: bool, yes: bool) -> None:
    """Delete a study with its rounds and scores."""
    upgrade_database()
    study = named_study(name)
    _delete(deletion.plan_study(study), lambda f: deletion.delete_study(study, force=f), yes, force)


@click.command("delete-system")
@with_appcontext
@click.argument("name")
@click.option("--force", is_flag=True, help="Also delete its human scores (exported first).")
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
def delete_system_command(name: str, force: bool, yes: bool) -> None:
    """Delete a system with its predictions, uploads and metric values."""
    upgrade_database()
    system = db.session.scalars(select(System).where(System.name == name)).first()
    if system is None:
        raise click.BadParameter(f"no system named {name}")
    _delete(deletion.plan_system(system), lambda f: deletion.delete_system(system, force=f), yes, force)


@click.command("delete-upload")
@with_appcontext
@click.argument("file_id", type=DB_ID)
@click.option("--force", is_flag=True, help="Also delete human scores of its answers (exported first).")
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
def delete_upload_command(file_id: int, force: bool, yes: bool) -> None:
    """Delete one uploaded prediction file (by id) and the predictions it brought."""
    upgrade_database()
    upload = db.session.get(PredictionFile, file_id)
    if upload is None:
        raise click.BadParameter(f"no upload with id {file_id}")
    _delete(deletion.plan_upload(upload), lambda f: deletion.delete_upload(upload, force=f), yes, force)


@click.command("delete-demo")
@with_appcontext
@click.option("--force", is_flag=True, help="Also delete human scores given to the demo (exported first).")
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
def delete_demo_command(force: bool, yes: bool) -> None:
    """Delete the shipped demo: its study, systems and documents."""
    upgrade_database()
    _delete(deletion.plan_demo(), lambda f: deletion.delete_demo(force=f), yes, force)


COMMANDS = [study_group, delete_system_command, delete_upload_command, delete_demo_command]
