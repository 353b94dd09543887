"""Deleting through the API: the deletion service's plan and rule (human scores go only with force, saved first)."""
from __future__ import annotations

from flask import request

from app.services import deletion
from app.web.api.schemas import Deleted, DeleteQuery
from app.web.errors import Problem as Refusal


def delete_answer(plan: deletion.DeletionPlan, carry_out) -> Deleted:
    """Carry out the plan (force from the query) and say what went; 409 when human scores would go unforced."""
    query: DeleteQuery = request.context.query
    try:
        saved = carry_out(query.force)
    except deletion.DeletionRefused as exc:
        raise Refusal(409, str(exc), errors=[{"field": "force", "location": "query", "message": str(exc)}]) from None
    return Deleted(what=plan.what, counts=plan.counts, scores=plan.scores,
                   scores_saved_as=saved.name if saved is not None else None)
