"""Write generated answers as L-Eval's ``.pred.jsonl`` rows.

turbo16k-test.py builds each row in this order: ``query``, ``gt``, ``prompt``,
``<model>_pred``, ``evaluation``, and writes it with ``json.dumps(row)`` (ASCII escapes,
default separators) and a newline. The published files have the same keys.
"""
from __future__ import annotations

import json
from typing import Iterable, Mapping

PRED_SUFFIX = "_pred"


def pred_key(system_name: str) -> str:
    """Return the answer's key for a system, e.g. ``turbo-16k-0613_pred``."""
    if not system_name or system_name != system_name.strip():
        raise ValueError(f"a system name must be non-empty without surrounding spaces, not {system_name!r}")
    return system_name + PRED_SUFFIX


def pred_row(query: str, gt: str, prompt: str, system_name: str, answer: str, evaluation: str) -> dict:
    """Return one row with L-Eval's keys in L-Eval's order."""
    return {"query": query, "gt": gt, "prompt": prompt, pred_key(system_name): answer, "evaluation": evaluation}


def dumps_rows(rows: Iterable[Mapping]) -> str:
    """Serialise rows as L-Eval writes them: one ``json.dumps`` per line."""
    return "".join(json.dumps(dict(row)) + "\n" for row in rows)


def file_name(system_name: str, task: str | None = None) -> str:
    """Return L-Eval's file name: ``<task>.pred.jsonl`` in a per-task layout, else ``<model>.pred.jsonl``."""
    stem = task if task else system_name
    if not stem or "/" in stem or "\\" in stem or stem in (".", ".."):
        raise ValueError(f"cannot name a prediction file after {stem!r}")
    return f"{stem}.pred.jsonl"
