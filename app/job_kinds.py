"""Import every module that registers a job kind, so workers know all handlers."""
from .services.judging import runs as judging_runs  # noqa: F401  (job kind "judge")
from .services.metric_scores import jobs as metric_jobs  # noqa: F401
