"""The judge's dry run: how many calls, tokens and dollars a run would take."""
from __future__ import annotations

from collections.abc import Iterable

from app.core.llm.pricing import DEFAULT_COMPLETION_TOKENS_PER_CALL, CostEstimate, PriceTable, estimate_calls
from app.core.judge.cache import JudgeCache, pair_key
from app.core.judge.profiles import DEFAULT, PROFILES, JudgeProfile
from app.core.judge.prompt import ORDERS, PairItem, PromptTemplate, render_pair


def estimate(
    pairs: Iterable[PairItem],
    template: PromptTemplate,
    model: str,
    *,
    prices: PriceTable | None = None,
    completion_tokens_per_call: int = DEFAULT_COMPLETION_TOKENS_PER_CALL,
    cache: JudgeCache | None = None,
    prompt_key: str | int | None = None,
    temperature: float = 0.0,
    profile: JudgeProfile = PROFILES[DEFAULT],
) -> CostEstimate:
    """Estimate API calls, tokens and cost of judging `pairs` in both orders.

    With `cache`, calls already cached are counted as cached, not as calls; pairs the profile
    ties without a call cost nothing.
    """
    prompt_version = profile.prompt_key(template) if prompt_key is None else prompt_key
    prompts: list[list[dict[str, str]]] = []
    cached = 0
    for item in pairs:
        if profile.skips(item):
            continue
        for order in ORDERS:
            if cache is not None:
                hit = cache.get(pair_key(model, prompt_version, item, order, temperature))
                if hit is not None and hit.verdict is not None:
                    cached += 1
                    continue
            # with its document and quote limit under the evidence profile
            prompts.append(render_pair(template, item, order, profile.max_quotes))
    return estimate_calls(prompts, model, cached=cached, prices=prices,
                          completion_tokens_per_call=completion_tokens_per_call)
