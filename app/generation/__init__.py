"""Generation pages: launching runs with a dry run, run manifests and downloads, comparing runs, prompts."""
from app.generation import views  # noqa: F401  (their routes)
from app.generation.blueprint import bp

__all__ = ["bp"]
