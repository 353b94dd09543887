"""The studies an annotator chooses from, each with their own progress, and the one to open without asking."""
from __future__ import annotations

from dataclasses import dataclass

from app.models import Study, User
from app.services.annotation.rounds import find_open_round
from app.services.annotation.workload import load_workload
from app.services.studies.lookup import studies_for


@dataclass(frozen=True)
class StudyChoice:
    study: Study
    scored: int  # answers of the annotator's share their open round has scored (the question pages' count)
    total: int  # answers in their share

    @property
    def finished(self) -> bool:
        return self.total > 0 and self.scored >= self.total

    @property
    def in_progress(self) -> bool:
        return 0 < self.scored and not self.finished

    @property
    def action(self) -> str:
        """The chooser's button: what opening the study will do."""
        if self.finished:
            return "Review"
        return "Continue" if self.scored else "Start"


def study_choices(user: User) -> list[StudyChoice]:
    """The open studies this account scores in (oldest first), with how far its open round has got.

    Reading never opens a round: a study not begun yet counts 0 scored.
    """
    choices = []
    for study in studies_for(user):
        round_ = find_open_round(study.id, user.id)
        workload = load_workload(study, round_.id if round_ is not None else None, user.id)
        choices.append(StudyChoice(study, workload.done, workload.total))
    return choices


def only_choice(choices: list[StudyChoice]) -> Study | None:
    """The study to open without showing the chooser: the only one there is."""
    return choices[0].study if len(choices) == 1 else None


def study_to_resume(user: User) -> Study | None:
    """Where an annotator lands after signing in: the only study open to them, else the only one in progress."""
    choices = study_choices(user)
    going = [choice for choice in choices if choice.in_progress]
    return only_choice(choices) or (going[0].study if len(going) == 1 else None)
