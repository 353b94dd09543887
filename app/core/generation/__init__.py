"""Generation core: L-Eval's prompts, truncation, token counts, prediction rows and manifests.

Pure: no Flask, no database, no network except the tokenizer library's own first load
(see ``tokens``). The job that calls a model lives in the services layer.
"""
