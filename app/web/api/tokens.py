"""API: the caller's own tokens: list them, revoke one (the API tokens page's list and its Revoke button)."""
from __future__ import annotations

from flask import abort, g, request

from app.services.api_tokens import TokenError, list_tokens, revoke_token, token_state
from app.web.api.auth import access, caller
from app.web.api.blueprint import bp
from app.web.api.paging import page_of
from app.web.api.schemas import PageQuery, Problem, TokenOut, TokenPage
from app.web.api.schemas.common import utc
from app.web.api.spec import operation

EVERY_ROLE = None  # every account may hold tokens (the tokens page is every role's): `access` takes None for that


def _out(token) -> TokenOut:
    return TokenOut(id=token.id, name=token.name, prefix=token.prefix, scope=token.scope, state=token_state(token),
                    current=token.id == g.api_token.id, created_at=utc(token.created_at),
                    expires_at=utc(token.expires_at), last_used_at=utc(token.last_used_at),
                    revoked_at=utc(token.revoked_at))


@bp.get("/tokens")
@access(write=False, roles=EVERY_ROLE)
@operation("listTokens", query=PageQuery, tags=["tokens"], resp={"HTTP_200": TokenPage})
def tokens():
    """List this account's tokens, newest first, with their state and last use.

    Only this account's: an admin's token lists the admin's own (Admin → Users and `token list` show others').
    """
    return page_of([_out(token) for token in list_tokens(caller())], request.context.query)


@bp.delete("/tokens/<int:token_id>")
@access(write=True, roles=EVERY_ROLE)
@operation("revokeToken", tags=["tokens"], resp={"HTTP_200": TokenOut, "HTTP_404": Problem},
           path={"token_id": "The token's id (GET /api/v1/tokens)"})
def revoke(token_id: int):
    """Revoke one of this account's tokens (it stops working at once; revoking it again changes nothing).

    Another account's token is not found (404), as on the API tokens page. Revoking the token of this request
    is allowed: its next request is a 401.
    """
    try:
        return _out(revoke_token(token_id, owner=caller()))
    except TokenError:
        abort(404, description=f"no token {token_id} of this account")
