"""Bootstrap resampling shared by every interval the analyses report, seeded from the data it resamples.

Every resampling (bootstrap picks, random sign flips) draws from `units_in_canonical_order`: the units
(one row of numbers each: all a statistic reads of that unit) sorted by their values, with a seed
hashed from those sorted values. So the same data gives the same interval whatever order it arrives
in and whatever ids its database gave it (an export re-imported elsewhere numbers its questions
differently), and the caller computes in the canonical order so that even the floating-point sums
are the same. Units with equal rows are interchangeable: the statistic cannot tell them apart.
A caller's `seed` is mixed in as a salt (0 by default).
"""

from __future__ import annotations

import hashlib
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

DEFAULT_RESAMPLES = 1000
DEFAULT_CONFIDENCE = 0.95


def units_in_canonical_order(unit_rows, salt: int = 0) -> tuple[np.ndarray, int]:
    """Return (order, seed): the units' positions sorted by their rows, and a seed hashed from the sorted rows.

    `unit_rows` is one row of numbers per unit (or one number per unit); NaN is allowed.
    """
    import numpy as np

    rows = np.asarray(unit_rows, dtype=np.float64)
    if rows.ndim == 1:
        rows = rows[:, None]
    rows = rows + 0.0  # turns -0.0 into 0.0: equal values, equal bytes
    rows[np.isnan(rows)] = np.nan  # one NaN bit pattern
    order = np.lexsort(rows.T[::-1]) if rows.shape[1] else np.arange(rows.shape[0])
    digest = hashlib.sha256(f"{rows.shape}:{int(salt)}:".encode())
    digest.update(np.ascontiguousarray(rows[order]).tobytes())
    return order, int.from_bytes(digest.digest()[:8], "big")


def canonical_resample_weights(unit_rows, n_resamples: int, salt: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Return (order, weights): the canonical order of the units and resample pick counts for them in that order.

    Reorder the data by `order` before multiplying: `weights @ data[order]`.
    """
    order, seed = units_in_canonical_order(unit_rows, salt)
    return order, resample_weights(len(order), n_resamples, seed)


def canonical_rng(unit_rows, salt: int = 0) -> tuple[np.ndarray, np.random.Generator]:
    """Return (order, generator) for resamplings that draw their own way (picks of pairs, sign flips)."""
    import numpy as np

    order, seed = units_in_canonical_order(unit_rows, salt)
    return order, np.random.default_rng(seed)


# Draws of at most this many cells (4 MB) are kept: a study-wide draw (1,000 resamples of 2,000 answers is 16 MB)
# is seeded from the scores, so each save asks for a new one, and eight kept would hold 128 MB for nothing.
CACHED_CELLS = 500_000


def resample_weights(n_units: int, n_resamples: int, seed: int) -> np.ndarray:
    """Draw bootstrap resamples of n_units as a (n_resamples, n_units) matrix of pick counts.

    Counts instead of index lists let every resampled statistic be a matrix product.
    Read-only; small draws are cached (the same data asks for the same draw on every page).
    """
    if n_units * n_resamples > CACHED_CELLS:
        return _draw(n_units, n_resamples, seed)
    return _cached_draw(n_units, n_resamples, seed)


@lru_cache(maxsize=8)
def _cached_draw(n_units: int, n_resamples: int, seed: int) -> np.ndarray:
    return _draw(n_units, n_resamples, seed)


def _draw(n_units: int, n_resamples: int, seed: int) -> np.ndarray:
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
