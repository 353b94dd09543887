"""A system's leaderboard keys (L-Eval's Max-Ctx, Tokens, Ret., PE, IDD, parameters, links) and its LV-Eval
ablation tag: parsing what a researcher types, storing it, and reading it back for pages and exports."""
from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path

from sqlalchemy import select

from app.core.stats.lveval import VARIANT_KINDS
from app.extensions import db
from app.models import System
from app.services.input_rules import text_problem

TOKEN_FIELDS = ("context_window", "input_tokens")
FLAG_FIELDS = ("retrieval", "prompt_engineering", "in_domain_data")
LABELS = {
    "context_window": "Max-Ctx", "input_tokens": "Tokens", "retrieval": "Ret.", "prompt_engineering": "PE",
    "in_domain_data": "IDD", "parameters": "Parameters", "links": "Links",
}
HINTS = {
    "context_window": "the model's maximum context length, in tokens (32768, 32k = 32,768, 1M)",
    "input_tokens": "the number of input tokens used in the experiments",
    "retrieval": "whether the system uses retrieval",
    "prompt_engineering": "whether the prompt was modified, e.g. with in-context examples",
    "in_domain_data": "whether training data from the tasks' sources was used; leave unknown if not transparent",
    "parameters": "e.g. 7B",
    "links": "paper, blog, code or demo: one URL per line",
}
MAX_TOKENS = 100_000_000
MAX_LINKS = 10
_TOKENS_RE = re.compile(r"^(\d+(?:\.\d+)?)\s*([kKmM]?)$")
_URL_RE = re.compile(r"^https?://[^\s<>\"']+$")
_FLAGS = {"yes": True, "true": True, "1": True, "no": False, "false": False, "0": False, "": None, "unknown": None}


def parse_tokens(text: str) -> int | None:
    """'32768', '32,768', '32k' (x 1024) or '1M' (x 1024²) as a whole number of tokens; '' is unknown."""
    text = text.strip().replace(",", "").replace("_", "")
    if not text:
        return None
    match = _TOKENS_RE.match(text)
    if not match:
        raise ValueError("a number of tokens, such as 32768, 32k or 1M")
    value = float(match.group(1)) * {"": 1, "k": 1024, "m": 1024 * 1024}[match.group(2).lower()]
    if value != int(value) or not 0 < value <= MAX_TOKENS:
        raise ValueError(f"a whole number of tokens from 1 to {MAX_TOKENS:,}")
    return int(value)


def parse_keys(form: Mapping[str, str]) -> tuple[dict, dict[str, str]]:
    """Validate a submitted form; return (values, errors by field)."""
    values: dict = {}
    errors: dict[str, str] = {}
    for name in TOKEN_FIELDS:
        try:
            values[name] = parse_tokens(str(form.get(name, "")))
        except ValueError as exc:
            errors[name] = f"{LABELS[name]}: expected {exc}"
    for name in FLAG_FIELDS:
        text = str(form.get(name, "")).strip().lower()
        if text not in _FLAGS:
            errors[name] = f"{LABELS[name]}: choose yes, no or unknown"
        else:
            values[name] = _FLAGS[text]
    parameters = " ".join(str(form.get("parameters", "")).split())
    problem = text_problem(parameters, column=System.parameters)
    if problem:
        errors["parameters"] = f"Parameters: {problem}"
    values["parameters"] = parameters
    links = [line.strip() for line in str(form.get("links", "")).splitlines() if line.strip()]
    bad = [link for link in links if not _URL_RE.match(link) or len(link) > 500]
    problem = text_problem("".join(links))
    if problem:
        errors["links"] = f"Links: {problem}"
    elif bad:
        errors["links"] = f"Links: each line must be one http(s) URL ({bad[0][:60]!r} is not)"
    elif len(links) > MAX_LINKS:
        errors["links"] = f"Links: at most {MAX_LINKS}"
    values["links"] = "\n".join(links)
    return values, errors


def parse_variant(system: System, form: Mapping[str, str]) -> tuple[dict, dict[str, str]]:
    """The ablation tag: a kind from VARIANT_KINDS and the system it is a variant of (both, or neither)."""
    kind = str(form.get("variant_kind", "")).strip()
    base_name = str(form.get("variant_of", "")).strip()
    if not kind and not base_name:
        return {"variant_kind": "", "variant_of_id": None}, {}
    if kind not in VARIANT_KINDS:
        return {}, {"variant_kind": "Variant: choose a kind of ablation"}
    base = db.session.scalars(select(System).where(System.name == base_name)).first()
    if base is None:
        return {}, {"variant_of": f"Variant of: no system named {base_name[:80]!r}"}
    if base.id == system.id or base.variant_of_id == system.id:
        return {}, {"variant_of": "Variant of: a system cannot be a variant of itself or of its own variant"}
    return {"variant_kind": kind, "variant_of_id": base.id}, {}


def update_system(system: System, values: Mapping) -> None:
    for name, value in values.items():
        setattr(system, name, value)
    db.session.commit()


def keys_of(system: System) -> dict:
    """The keys as shown and exported: None where nothing is stated; links as a list."""
    keys = {name: getattr(system, name) for name in TOKEN_FIELDS + FLAG_FIELDS}
    keys["parameters"] = system.parameters or None
    keys["links"] = [line for line in (system.links or "").splitlines() if line]
    return keys


def variant_of(system: System) -> tuple[System | None, str]:
    """The system this one is an ablation of (None if untagged or gone) and the kind."""
    if not system.variant_of_id or not system.variant_kind:
        return None, ""
    return db.session.get(System, system.variant_of_id), system.variant_kind


def apply_keys_file(path: Path) -> list[str]:
    """Apply {system: {key: value, variant_of: name, variant_kind: kind}} to systems that state nothing yet.

    The demo ships one; a researcher's edits are never overwritten. Returns the systems changed.
    """
    if not path.is_file():
        return []
    changed = []
    for name, data in json.loads(path.read_text(encoding="utf-8")).items():
        system = db.session.scalars(select(System).where(System.name == name)).first()
        if system is None or any(getattr(system, f) is not None for f in TOKEN_FIELDS + FLAG_FIELDS) \
                or system.parameters or system.links or system.variant_kind:
            continue
        form = {key: ("" if value is None else ("yes" if value is True else "no" if value is False else str(value)))
                for key, value in data.items()}
        values, errors = parse_keys(form)
        variant, variant_errors = parse_variant(system, form)
        if errors or variant_errors:
            raise ValueError(f"{path}: {name}: {'; '.join({**errors, **variant_errors}.values())}")
        for key, value in {**values, **variant}.items():
            setattr(system, key, value)
        changed.append(name)
    db.session.commit()
    return changed


def system_card(system: System) -> dict:
    """What the system page shows and edits: the keys, the ablation tag and the choices for it."""
    base, kind = variant_of(system)
    others = db.session.scalars(select(System.name).where(System.id != system.id).order_by(System.name)).all()
    return {"values": keys_of(system), "labels": LABELS, "hints": HINTS, "variant_of": base.name if base else "",
            "variant_kind": kind, "kinds": VARIANT_KINDS, "systems": others}


def save_system_card(system: System, form: Mapping[str, str]) -> dict[str, str]:
    """Validate and save the keys and the ablation tag together; return the errors (nothing saved if any)."""
    values, errors = parse_keys(form)
    variant, variant_errors = parse_variant(system, form)
    errors.update(variant_errors)
    if not errors:
        update_system(system, {**values, **variant})
    return errors
