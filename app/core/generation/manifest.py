"""A generation run's manifest: what must be equal for two runs' answers to be comparable.

A manifest is plain JSON data. ``compare`` flattens two of them and lists every field that
differs, so a page can say exactly why two runs' scores may not reproduce.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from app.core.llm.client import base_url_host

MANIFEST_SCHEMA = 1
# Which documents were cut, and how: kept beside the manifest, summed up by context.documents_cut.
CUTS_KEY = "truncated_documents"
# Order in which a comparison lists fields (anything else follows, sorted).
FIELD_ORDER = (
    "model.requested", "model.reported", "server.host",
    "decoding.temperature", "decoding.max_tokens", "decoding.seed",
    "prompt.profile", "prompt.version", "prompt.fingerprint",
    "length_instruction",
    "context.tokens", "context.truncation", "context.tokenizer", "context.documents_cut",
    "questions.set", "questions.count", "questions.fingerprint",
)


def questions_fingerprint(items: Iterable[tuple[str, str, str, str]]) -> str:
    """Fingerprint the questions' data: (document sha256, instruction, reference, evaluation) in run order."""
    digest = hashlib.sha256()
    for item in items:
        digest.update(json.dumps(list(item), ensure_ascii=False, separators=(",", ":")).encode("utf-8"))
        digest.update(b"\n")
    return digest.hexdigest()


def build(
    *, model: str, reported_model: str | None, base_url: str, temperature: float, max_tokens: int,
    seed: int | None, profile: str, profile_version: int, profile_fingerprint: str,
    length_instruction: bool, context_tokens: int, truncation: str, tokenizer: Mapping[str, Any],
    documents_cut: int, question_set: str, question_count: int, question_fingerprint: str,
) -> dict:
    """Return a manifest with every field the issue asks a run to keep."""
    return {
        "schema": MANIFEST_SCHEMA,
        "model": {"requested": model, "reported": reported_model},
        "server": {"host": base_url_host(base_url)},
        "decoding": {"temperature": float(temperature), "max_tokens": int(max_tokens), "seed": seed},
        "prompt": {"profile": profile, "version": profile_version, "fingerprint": profile_fingerprint},
        "length_instruction": bool(length_instruction),
        "context": {
            "tokens": int(context_tokens), "truncation": truncation, "tokenizer": dict(tokenizer),
            "documents_cut": int(documents_cut),
        },
        "questions": {"set": question_set, "count": int(question_count), "fingerprint": question_fingerprint},
    }


def flatten(data: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """Flatten nested mappings to dotted keys (lists stay values)."""
    flat: dict[str, Any] = {}
    for key, value in data.items():
        dotted = f"{prefix}{key}"
        if isinstance(value, Mapping) and value:
            flat.update(flatten(value, dotted + "."))
        else:
            flat[dotted] = value
    return flat


@dataclass(frozen=True)
class Difference:
    field: str
    left: Any
    right: Any


_MISSING = object()


def compare(left: Mapping[str, Any], right: Mapping[str, Any]) -> list[Difference]:
    """List the fields whose values differ (a field one side lacks shows as None there).

    The per-document cut records are left out: ``context.documents_cut`` and the question
    fingerprint already say whether the same documents were cut the same way.
    """
    a = flatten({k: v for k, v in left.items() if k != CUTS_KEY})
    b = flatten({k: v for k, v in right.items() if k != CUTS_KEY})
    fields = [f for f in FIELD_ORDER if f in a or f in b]
    fields += sorted((set(a) | set(b)) - set(fields))
    differences = []
    for name in fields:
        va, vb = a.get(name, _MISSING), b.get(name, _MISSING)
        if va != vb or (va is _MISSING) != (vb is _MISSING):
            differences.append(Difference(name, None if va is _MISSING else va, None if vb is _MISSING else vb))
    return differences
