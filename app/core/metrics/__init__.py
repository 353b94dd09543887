"""Automatic metrics for LEval Studio: pure functions, no Flask, no database.

Every function takes a ``profile``: ``official`` reproduces L-Eval's and
LV-Eval's reference scripts, quirks included; ``fixed`` corrects the quirks
listed in :data:`QUIRKS` (``paper`` is accepted as an alias of ``fixed``).
"""

from app.core.metrics.evaluate import METRIC_KEYS, aggregate, describe_file, evaluate_file, evaluate_rows, read_rows, score_item
from app.core.metrics.lveval import KeywordWarning, keyword_f1
from app.core.metrics.profiles import PROFILES, resolve_profile
from app.core.metrics.quirks import QUIRKS

__all__ = [
    "METRIC_KEYS", "PROFILES", "QUIRKS", "KeywordWarning", "aggregate", "describe_file", "evaluate_file",
    "evaluate_rows", "keyword_f1", "read_rows", "resolve_profile", "score_item",
]
