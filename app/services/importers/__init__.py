"""Importers for L-Eval's three file formats."""
from app.services.importers.runner import FileReport, ImportReport, import_path

__all__ = ["ImportReport", "FileReport", "import_path"]
