"""Plan a generation run without calling anything: each question's calls, their content
addresses, each document's truncation, and the dry-run estimate of calls and tokens.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Hashable, Iterable, Mapping, Sequence

from app.core.generation import prompts, truncate
from app.core.generation.prompts import PromptPlan, PromptProfile, Question
from app.core.generation.tokens import TokenCounter

CALL_KEY_SCHEMA = 1


@dataclass(frozen=True)
class Settings:
    """What shapes the prompts and calls of a run."""

    model: str
    endpoint: str  # base URL host (and path): the same model name on two servers is two models
    context_tokens: int
    max_tokens: int = 512
    temperature: float = 0.0001
    seed: int | None = None
    length_instruction: bool = False
    truncation: str = "leval"


@dataclass(frozen=True)
class Item:
    """A question to answer, with its document's text and a key that groups questions by document."""

    question_id: Hashable
    document_key: Hashable
    document: str
    question: Question


@dataclass(frozen=True)
class PlannedQuestion:
    item: Item
    prompt: PromptPlan
    first_key: str
    followup_key: str | None
    call_tokens: tuple[int, ...]  # prompt tokens of each call, first then follow-up

    @property
    def keys(self) -> tuple[str, ...]:
        return (self.first_key,) if self.followup_key is None else (self.first_key, self.followup_key)


@dataclass
class RunPlan:
    questions: list[PlannedQuestion] = field(default_factory=list)
    truncations: dict[Hashable, truncate.Truncation] = field(default_factory=dict)

    @property
    def calls(self) -> int:
        return sum(1 + (q.followup_key is not None) for q in self.questions)

    def documents_cut(self) -> int:
        return sum(1 for t in self.truncations.values() if t.cut)


def call_key(settings: Settings, messages: Sequence[Mapping[str, str]]) -> str:
    """Return the sha256 content address of one chat call."""
    canonical = json.dumps(
        {
            "schema": CALL_KEY_SCHEMA, "endpoint": settings.endpoint, "model": settings.model,
            "messages": [{"role": m["role"], "content": m["content"]} for m in messages],
            "temperature": float(settings.temperature), "max_tokens": int(settings.max_tokens),
            "seed": settings.seed,
        },
        ensure_ascii=False, sort_keys=True, separators=(",", ":"),
    )
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _messages_tokens(count: TokenCounter, messages: Sequence[Mapping[str, str]]) -> int:
    return sum(count(m["content"]) for m in messages)


def _budget(profile: PromptProfile, settings: Settings, item: Item, count: TokenCounter) -> int:
    overhead = 0
    if settings.truncation == "fit":
        overhead = sum(count(t) for t in prompts.document_overhead(profile, item.question, settings.length_instruction))
    return truncate.document_budget(settings.context_tokens, settings.max_tokens, overhead)


def plan_run(profile: PromptProfile, settings: Settings, items: Iterable[Item], count: TokenCounter) -> RunPlan:
    """Truncate each document once (as L-Eval does per line) and build every question's calls."""
    run = RunPlan()
    for item in items:
        cut = run.truncations.get(item.document_key)
        if cut is None or settings.truncation == "fit":
            # fit budgets depend on the question's own prompt, so each question gets its own cut;
            # the document's record keeps the tightest one.
            fresh = truncate.truncate(item.document, _budget(profile, settings, item, count), count,
                                      keep_end=prompts.keeps_end(item.question.task), method=settings.truncation)
            if cut is None or len(fresh.text) < len(cut.text):
                run.truncations[item.document_key] = fresh
            cut = fresh
        prompt = prompts.build(profile, item.question, cut.text, settings.length_instruction)
        first_key = call_key(settings, prompt.messages)
        followup = prompt.followup_messages()
        followup_key = call_key(settings, followup) if followup else None
        tokens = (_messages_tokens(count, prompt.messages),) + ((_messages_tokens(count, followup),) if followup else ())
        run.questions.append(PlannedQuestion(item, prompt, first_key, followup_key, tokens))
    return run


def estimate(run: RunPlan, settings: Settings, cached_keys: set[str] | frozenset[str] = frozenset()) -> dict:
    """Return the dry run: calls and tokens still to spend (cached calls are free)."""
    calls = prompt_tokens = cached = 0
    seen: set[str] = set()
    for q in run.questions:
        for key, tokens in zip(q.keys, q.call_tokens):
            if key in cached_keys or key in seen:
                cached += 1
                continue
            seen.add(key)
            calls += 1
            prompt_tokens += tokens
    return {
        "questions": len(run.questions), "calls": calls, "cached_calls": cached,
        "prompt_tokens": prompt_tokens, "max_completion_tokens": calls * settings.max_tokens,
        "documents": len(run.truncations), "documents_cut": run.documents_cut(),
    }
