"""Import every module that registers a job kind, so workers know all handlers."""
