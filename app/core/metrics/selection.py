"""Which rows of a prediction file count in its score, and with which metric.

L-Eval's ``auto_eval.py`` keeps only the rows whose ``evaluation`` is exactly ``"f1"``,
``"rouge"`` or ``"exam"`` (so ``"F1"``, ``"LLM"`` and ``"human"`` rows are skipped), scores
every kept row with the metric of the LAST kept row, and refuses a file that keeps none.
The ``official`` profile follows that rule; ``fixed`` reads the spelling case- and
space-insensitively and scores each kept row with its own metric.

Rows that do not count are still scored by their own evaluation for the metric-versus-human
analysis, but under the ``analysis`` scope, never in a file or task score.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from app.core.metrics.profiles import OFFICIAL, resolve_profile

# auto_eval.py's SUPPORT_METRICS, spelled as it compares them.
COUNTED_EVALUATIONS = ("f1", "rouge", "exam")
# LV-Eval rows carry no `evaluation`; the app scores them all with keyword F1.
LVEVAL_EVALUATION = "keyword_f1"
# The labels a stored per-row value carries.
SCOPE_COUNTED = "counted"  # counted in the file (task) score, as the reference script counts it
SCOPE_ANALYSIS = "analysis"  # scored for the analysis only (e.g. LLM and human rows)
SCOPES = {
    SCOPE_COUNTED: "Counted in the task score",
    SCOPE_ANALYSIS: "Analysis only (scored by the row's own evaluation, never in a task score)",
}


class NothingCounted(ValueError):
    """A file in which no row counts: auto_eval.py refuses it (its `assert config_name is not None`)."""


@dataclass(frozen=True)
class FilePlan:
    """The rows that count (positions in file order) and the evaluation each is scored with."""

    counted: dict[int, str]
    analysis: tuple[int, ...]
    file_evaluation: str | None  # the one evaluation of every counted row (official), else None

    @property
    def n(self) -> int:
        return len(self.counted)


def counts(evaluation: object, profile: str = OFFICIAL) -> bool:
    """Tell whether a row with this `evaluation` counts in its file's score under `profile`."""
    if not isinstance(evaluation, str):
        return False
    if evaluation == LVEVAL_EVALUATION:
        return True
    if resolve_profile(profile) == OFFICIAL:
        return evaluation in COUNTED_EVALUATIONS
    return evaluation.strip().lower() in COUNTED_EVALUATIONS


def plan_file(evaluations: Sequence[object], profile: str = OFFICIAL, *, override: str | None = None,
              name: str = "the file", refuse: bool = True) -> FilePlan:
    """Decide which rows count and how each is scored; raise NothingCounted when none does (unless not `refuse`).

    `evaluations` are the rows' `evaluation` values in file order. An `override` (the `eval
    --evaluation` option) makes every row count with that evaluation.
    """
    profile = resolve_profile(profile)
    if override is not None:
        return FilePlan({i: override for i in range(len(evaluations))}, (), override)
    kept = [i for i, evaluation in enumerate(evaluations) if counts(evaluation, profile)]
    kept_set = set(kept)
    analysis = tuple(i for i in range(len(evaluations)) if i not in kept_set)
    if not kept and refuse:
        raise NothingCounted(f"{name}: no row has evaluation {', '.join(map(repr, COUNTED_EVALUATIONS))}"
                             f"{' (exactly, as auto_eval.py compares)' if profile == OFFICIAL else ''}; "
                             f"auto_eval.py refuses such a file ({_tally(evaluations)})")
    if not kept:
        return FilePlan({}, analysis, None)
    if profile == OFFICIAL:
        # auto_eval.py's config_name: the evaluation of the last kept row, used for all of them.
        last = str(evaluations[kept[-1]])
        return FilePlan({i: last for i in kept}, analysis, last)
    chosen = {i: str(evaluations[i]).strip().lower() for i in kept}
    return FilePlan(chosen, analysis, None)


def _tally(evaluations: Sequence[object]) -> str:
    found: dict[str, int] = {}
    for evaluation in evaluations:
        label = repr(evaluation) if isinstance(evaluation, str) else ("no evaluation" if evaluation is None
                                                                       else type(evaluation).__name__)
        found[label] = found.get(label, 0) + 1
    return ", ".join(f"{count} {label}" for label, count in found.items()) or "no rows"
