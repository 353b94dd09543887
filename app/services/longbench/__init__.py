"""LongBench as a benchmark (v1, LongBench-E and v2): import its files, score them as eval.py and result.py do, and
assemble its leaderboard tab (docs/longbench.md)."""
from app.services.longbench.importer import LongbenchImportReport, ModelReport, import_path, import_payloads

__all__ = ["LongbenchImportReport", "ModelReport", "import_path", "import_payloads"]
