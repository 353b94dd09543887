"""Bootstrap resampling shared by every interval the analyses report."""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

DEFAULT_RESAMPLES = 1000
DEFAULT_CONFIDENCE = 0.95


@lru_cache(maxsize=8)
def resample_weights(n_units: int, n_resamples: int, seed: int) -> np.ndarray:
    """Draw bootstrap resamples of n_units as a (n_resamples, n_units) matrix of pick counts.

    Counts instead of index lists let every resampled statistic be a matrix product.
    Cached and read-only: the per-system bootstraps all ask for the same draw.
    """
    import numpy as np

    rng = np.random.default_rng(seed)
    picks = rng.integers(0, n_units, size=(n_resamples, n_units))
    offsets = (np.arange(n_resamples) * n_units)[:, None]
    counts = np.bincount((picks + offsets).ravel(), minlength=n_resamples * n_units)
    weights = counts.reshape(n_resamples, n_units).astype(np.float64)
    weights.flags.writeable = False
    return weights


def percentile_interval(
    resampled: np.ndarray, confidence: float = DEFAULT_CONFIDENCE
) -> tuple[np.ndarray, np.ndarray]:
    """Return percentile bounds along axis 0, ignoring resamples where the statistic is undefined."""
    import numpy as np

    tail = (1.0 - confidence) / 2.0
    finite_columns = np.isfinite(resampled).any(axis=0)
    low = np.full(resampled.shape[1:], np.nan)
    high = np.full(resampled.shape[1:], np.nan)
    if finite_columns.any():
        bounds = np.nanquantile(resampled[:, finite_columns], [tail, 1.0 - tail], axis=0)
        low[finite_columns], high[finite_columns] = bounds[0], bounds[1]
    return low, high
