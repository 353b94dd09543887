"""Studies (staff only): create, configure, open and close evaluation campaigns; pin answers; delete data."""
from app.studies import deletes, views  # noqa: F401  (their routes)
from app.studies.blueprint import bp

__all__ = ["bp"]
