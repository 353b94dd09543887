"""Reading the study forms' fields: id lists and the overlap."""
from __future__ import annotations

from app.routing import id_list  # noqa: F401  (checkbox values as ids: the one rule for ids from forms)
from app.services.studies.setup import StudyError


def optional_overlap(text: str) -> int | None:
    """Blank means every annotator scores every answer; otherwise a whole number of at least 1."""
    text = (text or "").strip()
    if not text:
        return None
    if not text.isdigit() or len(text) > 4 or int(text) < 1:
        raise StudyError("Overlap must be blank (everyone) or a whole number of at least 1.")
    return int(text)
