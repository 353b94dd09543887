"""Importers for L-Eval's three file formats."""
from .errors import ImportFailure
from .runner import ImportReport, FileReport, import_path

__all__ = ["ImportFailure", "ImportReport", "FileReport", "import_path"]
