"""The JSON API under /api/v1/: personal access tokens (Bearer), JSON only, an OpenAPI 3.1 document.

One blueprint, `api`, split into modules by noun. Each view authorises with `access` (the account's
role, and the token's scope for writes), validates and shapes with the pydantic models of `schemas`
through spectree, and calls the same service the page calls. Session cookies are never read here
and the blueprint is exempt from CSRF (a page cannot be tricked into calling it: it needs the token).
Every answer follows the conventions of `conventions` (ETag, problem documents) and `idempotency`.
"""
from app.web.api import jobs, results, runs, studies, systems, tokens, uploads  # noqa: F401  (their routes)
from app.web.api.blueprint import bp

__all__ = ["bp"]
