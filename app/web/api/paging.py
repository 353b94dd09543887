"""Pages of a list: every API list answers {items, page, per_page, total} and an RFC 8288 `Link` header naming
the first, previous, next and last pages, with the request's own filters kept."""
from __future__ import annotations

from urllib.parse import urlencode

from flask import request

from app.web.api.schemas import Page, PageQuery


def page_links(page: int, per_page: int, total: int) -> str:
    """The Link header of one page: rel first, prev, next and last, each the request's URL with its page."""
    last = max(1, -(-total // per_page))
    wanted = {"first": 1, "last": last}
    if page > 1:
        wanted["prev"] = min(page - 1, last)
    if page < last:
        wanted["next"] = page + 1
    args = [(key, value) for key, value in request.args.items(multi=True) if key not in ("page", "per_page")]
    links = []
    for rel in ("first", "prev", "next", "last"):
        if rel in wanted:
            query = urlencode([*args, ("page", wanted[rel]), ("per_page", per_page)])
            links.append(f'<{request.script_root}{request.path}?{query}>; rel="{rel}"')
    return ", ".join(links)


def page_answer(items: list, total: int, query: PageQuery):
    """One page of a list whose items were already cut to the page: the answer with its Link header."""
    page = Page(items=items, page=query.page, per_page=query.per_page, total=total)
    return page, 200, {"Link": page_links(query.page, query.per_page, total)}


def page_of(items: list, query: PageQuery):
    """One page of the whole list."""
    start = (query.page - 1) * query.per_page
    return page_answer(items[start:start + query.per_page], len(items), query)
