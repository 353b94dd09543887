"""Hand-written, server-rendered SVG charts: no JavaScript, no external references.

Every function returns a complete <svg> string with all text escaped, so a
template can embed it with |safe.
"""

from app.core.charts.bars import MeanInterval, distribution_chart, grouped_bar_chart, mean_ci_chart
from app.core.charts.ranks import rank_chart
from app.core.charts.scatter import scatter_chart
from app.core.charts.svg import CONTENT_WIDTH

__all__ = [
    "CONTENT_WIDTH",
    "MeanInterval",
    "distribution_chart",
    "grouped_bar_chart",
    "mean_ci_chart",
    "rank_chart",
    "scatter_chart",
]
