"""Query parameters shared by the results pages: the study, the view, the metric profile and stale scores."""
from __future__ import annotations

from flask import abort, request

from app.core.metrics.profiles import PROFILES
from app.models import Study
from app.models.ids import parse_db_id
from app.services.results import VIEWS
from app.services.studies.lookup import default_study, find_study


class ChooseStudy(Exception):
    """No ?study= was given and more than one study could be meant: the page asks which."""


def study_arg() -> Study:
    """Return ?study=<id>, or the only open study; 404 for an unknown one (a name is no id: the pages link by id)."""
    reference = request.args.get("study", "")
    if reference:
        study_id = parse_db_id(reference)
        study = find_study(study_id=study_id) if study_id is not None else None
        if study is None:
            abort(404, description=f"no study with id {reference[:40]!r}")
        return study
    study = default_study()
    if study is None:
        raise ChooseStudy()
    return study


def stale_arg() -> bool:
    """?stale=1 counts scores of answer versions the study no longer shows (left out by default)."""
    return request.args.get("stale") == "1"


def view_arg() -> str:
    """Return ?view= (all scores, or annotators who finished); 400 on anything else."""
    view = request.args.get("view", "all")
    if view not in VIEWS:
        abort(400, description=f"view must be one of {', '.join(VIEWS)}")
    return view


def profile_arg() -> str:
    """Return ?profile= (official or fixed metric implementation); 400 on anything else."""
    profile = request.args.get("profile", "official")
    if profile not in PROFILES:
        abort(400, description=f"profile must be one of {', '.join(PROFILES)}")
    return profile
