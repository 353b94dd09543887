"""Generation pages: launching runs with a dry run, run manifests and downloads, comparing runs, prompts."""
from . import views  # noqa: F401  (their routes)
from .blueprint import bp

__all__ = ["bp"]
