"""Where L-Eval's published data lies for tests and benchmarks (../shared/leval), and what to do without it."""
from __future__ import annotations

import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
SHARED_LEVAL = (REPO_ROOT.parent / "shared" / "leval").resolve()
PREDICTIONS = SHARED_LEVAL / "Predictions"
HUMAN_EVAL = PREDICTIONS / "human_eval"
MISSING = f"L-Eval data not found at {SHARED_LEVAL} (clone the project beside ../shared to run this test)"


def in_ci() -> bool:
    return os.environ.get("CI") == "true"


def shared_available() -> bool:
    return HUMAN_EVAL.is_dir()


def require_shared() -> Path:
    """Return ../shared/leval; without it, skip the test with the reason (fail it under CI=true)."""
    import pytest

    if not shared_available():
        if in_ci():
            pytest.fail(MISSING)
        pytest.skip(MISSING)
    return SHARED_LEVAL


def require_human_eval() -> Path:
    """L-Eval's human-evaluation folder (the README's import), skipping or failing as require_shared does."""
    require_shared()
    return HUMAN_EVAL
