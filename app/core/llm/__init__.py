"""Calling OpenAI-compatible chat servers: the client, and many calls run well.

Pure (no Flask, no database): the judge, the pointwise rater and generation all run their
calls through `run_calls`, which gives them bounded concurrency, a content-addressed cache
checked first, a USD budget, cancellation and exact usage accounting in one place.
"""
