"""The Disagreements page's list, searched and filtered on the server: by task, by words, a page at a time."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from app.core.text import matches_search, search_terms
from app.services.results.assemble import DISAGREEMENTS_SHOWN, disagreements


@dataclass
class DisagreementPage:
    rows: list[dict[str, Any]]  # this page's questions, largest gap first
    total: int  # questions with a gap at all
    matching: int  # of those, the ones the filter keeps
    page: int
    pages: int
    per_page: int
    tasks: list[str] = field(default_factory=list)  # the task filter's choices


def browse_disagreements(study_id: int, column_key: str, view: str, profile: str, *, task: str = "",
                         search: str = "", page: int = 1, per_page: int = DISAGREEMENTS_SHOWN) -> DisagreementPage:
    """Every question's gap (largest first), kept when of `task` and when its question, document or a system's
    name has every word of `search` (core.text.search_terms)."""
    found = disagreements(study_id, column_key, view, profile, top_k=None)
    terms = search_terms(search)
    kept = [row for row in found if (not task or row["task"] == task)
            and matches_search(terms, row["question"], row["document"], *row["human_ranks"])]
    pages = max(1, -(-len(kept) // per_page))
    page = min(max(page, 1), pages)
    return DisagreementPage(rows=kept[(page - 1) * per_page: page * per_page], total=len(found),
                            matching=len(kept), page=page, pages=pages, per_page=per_page,
                            tasks=sorted({row["task"] for row in found if row["task"]}))
