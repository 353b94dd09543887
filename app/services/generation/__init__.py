"""Generating predictions through any OpenAI-compatible server: prompt versions, question sets, runs.

`spec` checks and plans a run, `runs` launches, executes (the "generate" job kind) and records
it, `store` writes the call cache, the run's system and answers and the `.pred.jsonl` download.
"""
