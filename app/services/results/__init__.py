"""Results and analysis from the database: human scores, metrics against humans, agreement."""
from app.services.results.assemble import (
    analyse,
    columns_for,
    current_scores,
    disagreements,
    full_results,
    length_instructed_systems,
    rater_agreement,
    sampling_note,
)
from app.services.results.length_flags import (
    SystemFlag,
    prompt_rows,
    set_length_instruction_flags,
    systems_with_flags,
)
from app.services.results.metric_values import (
    AUTOMATIC_METRICS,
    LENGTH_KEY,
    LENGTH_LABEL,
    PROFILE_LABELS,
    MetricColumn,
    metric_columns,
)
from app.services.results.scores import (
    VIEW_LABELS,
    VIEWS,
    AnnotatorProgress,
    CurrentScores,
    load_current_scores,
)

__all__ = [
    "AUTOMATIC_METRICS", "AnnotatorProgress", "CurrentScores", "LENGTH_KEY", "LENGTH_LABEL", "MetricColumn",
    "PROFILE_LABELS", "SystemFlag", "VIEWS", "VIEW_LABELS", "analyse", "columns_for", "current_scores",
    "disagreements", "full_results", "length_instructed_systems", "load_current_scores", "metric_columns",
    "prompt_rows", "rater_agreement", "sampling_note", "set_length_instruction_flags", "systems_with_flags",
]
