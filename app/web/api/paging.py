"""Pages of a list: every API list answers {items, page, per_page, total}."""
from __future__ import annotations

from app.web.api.schemas import Page, PageQuery


def page_of(items: list, query: PageQuery) -> Page:
    start = (query.page - 1) * query.per_page
    return Page(items=items[start:start + query.per_page], page=query.page, per_page=query.per_page,
                total=len(items))
