"""Each results page runs only the part of the analysis it shows, with the same numbers as the whole."""
from __future__ import annotations

import subprocess
import sys

import pytest

from app.core.stats import build_results, system_means
from app.core.stats.analyses import PARTS
from tests.conftest import REPO_ROOT
from tests.core.test_analysis import make_records

SHARED = {"n_scores", "annotators"}
KEYS = {"human": {"systems", "breakdowns", "significance"},
        "correlation": {"correlations", "ranks", "significance_threshold_tau", "length_instruction"},
        "agreement": {"agreement"}}


def test_each_part_alone_equals_that_part_of_the_whole():
    records = make_records(n_questions=21, missing=0.1)
    metrics = {"F1": {s: m + 0.1 for s, m in system_means(records).items()}}
    whole = build_results(records, metrics, length_instructed={"sys5", "sys6"}, n_resamples=100)
    assert set(whole) == SHARED.union(*KEYS.values())
    for part in PARTS:
        alone = build_results(records, metrics, length_instructed={"sys5", "sys6"}, n_resamples=100, parts=(part,))
        assert set(alone) == SHARED | KEYS[part], part
        assert alone == {key: whole[key] for key in alone}, part
    with pytest.raises(ValueError, match="parts"):
        build_results(records, metrics, parts=("everything",))


def test_importing_the_analyses_loads_no_numpy():
    """The results service imports PARTS at start; numpy waits for the first analysis."""
    code = "import sys, app.core.stats.analyses; print('numpy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True, timeout=60,
                         check=False)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"
