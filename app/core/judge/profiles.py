"""Judge profiles: L-Eval's `llm_eval.py` exactly (`leval`), and LEval Studio's own default.

A profile fixes everything about a judgment except the judge model and the pairs: the prompt
(for `leval`, L-Eval's verbatim and not editable), how a verdict is read from the reply, the
call's max_tokens and n, and whether two identical answers are judged at all. Every judge
number is labelled with the profile that produced it.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial

from app.core.evidence import DEFAULT_MAX_QUOTES, REPLY_TOKENS, Quote, parse_reply, read_verdict, verdict_format
from app.core.judge.prompt import PairItem, PromptTemplate
from app.core.judge.verdict import Verdict, parse_verdict, parse_verdict_leval
from app.core.text import normalize_ws

DEFAULT = "default"
LEVAL = "leval"
EVIDENCE = "evidence"

# Evaluation/llm_eval.py (OpenLMLab/LEval), judge_prompts "pair-v2": system prompt and user template,
# verbatim (two spaces after "long document."). {ref_answer} is its name for the reference.
LEVAL_SYSTEM_PROMPT = (
    "Please act as an impartial judge and evaluate the quality of the responses provided by two AI assistants "
    "to the user question about the content of a long document.  You will be given a reference answer written "
    "by human, assistant A's answer, and assistant B's answer. Your job is to evaluate which assistant's answer "
    "is better. Begin your evaluation by comparing both assistants' answers with the reference answer. "
    "Additional details or information that are not mentioned in reference answer cannot be considered as "
    "advantages and do not let them sway your judgment. Your evaluation should also consider the relevance to "
    "user's question but it is more important to avoid factual errors according to the reference answer. Avoid "
    "any position biases and ensure that the order in which the responses were presented does not influence "
    "your decision. Do not allow the length of the responses to influence your evaluation. Do not favor certain "
    "names of the assistants. Be as objective as possible. After providing your explanation, output your final "
    "verdict by strictly following this format: \"[[A]]\" if assistant A is better, \"[[B]]\" if assistant B is "
    "better, and \"[[C]]\" for a tie."
)
LEVAL_USER_TEMPLATE = (
    "[User Question]\n{question}\n\n"
    "[The Start of Reference Answer]\n{ref_answer}\n[The End of Reference Answer]\n\n"
    "[The Start of Assistant A's Answer]\n{answer_a}\n[The End of Assistant A's Answer]\n\n"
    "[The Start of Assistant B's Answer]\n{answer_b}\n[The End of Assistant B's Answer]"
)
LEVAL_TEMPLATE = PromptTemplate(name="leval-pair-v2", version=1, system=LEVAL_SYSTEM_PROMPT,
                                user_template=LEVAL_USER_TEMPLATE)


@dataclass(frozen=True)
class JudgeProfile:
    name: str
    label: str
    parse: Callable[[str | None], Verdict | None]
    max_tokens: int | None
    n: int | None
    tie_identical: bool  # identical answers (after whitespace folding) tie in both orders without a call
    template: PromptTemplate | None  # a fixed prompt; None: any stored prompt version
    temperature: float | None  # a fixed temperature; None: the run's
    shows_document: bool = False  # the evidence profile: its prompts show the document, no other's do
    quotes: Callable[[str | None], tuple[Quote, ...]] = lambda reply: ()  # the reply's quotes, unchecked
    response_format: dict | None = None  # sent with each call where the server takes it
    max_quotes: int = DEFAULT_MAX_QUOTES  # the evidence profile's quotes per answer, asked for and kept
    json_schema: bool = True  # the evidence profile's: ask for JSON through response_format

    def prompt_key(self, template: PromptTemplate) -> str:
        """The prompt part of a cache key: the prompt's fingerprint, plus the profile unless it is the default.

        The profile changes how a reply is read and what is asked for (max_tokens), so the same
        prompt under two profiles must not share judgments; default keys stay as they always were.
        The evidence profile's options join the key only when they differ from its defaults.
        """
        fingerprint = template.fingerprint()
        key = fingerprint if self.name == DEFAULT else f"{fingerprint}|{self.name}"
        if (self.max_quotes, self.json_schema) != (DEFAULT_MAX_QUOTES, True):
            key += f"|quotes={self.max_quotes}|json={int(self.json_schema)}"
        return key

    def with_evidence_options(self, max_quotes: int, json_schema: bool) -> JudgeProfile:
        """This profile asking for (and keeping) up to `max_quotes` quotes per answer, with or without the JSON
        schema; a profile that shows no document has no quotes and is returned as it is."""
        if not self.shows_document:
            return self
        return replace(self, parse=partial(parse_verdict_evidence, max_quotes=max_quotes),
                       quotes=partial(evidence_quotes, max_quotes=max_quotes),
                       response_format=verdict_format(max_quotes) if json_schema else None,
                       max_quotes=max_quotes, json_schema=json_schema)

    def skips(self, item: PairItem) -> bool:
        """True when this pair is a tie without a call."""
        return self.tie_identical and identical_answers(item)


def identical_answers(item: PairItem) -> bool:
    """The two answers are the same text once whitespace is folded."""
    return normalize_ws(item.system_answer) == normalize_ws(item.baseline_answer)


def _evidence_reply(reply: str | None, max_quotes: int):
    return parse_reply(reply, decision="verdict", read_decision=read_verdict, read_text_decision=parse_verdict,
                       answers=("A", "B"), max_quotes=max_quotes)


def parse_verdict_evidence(reply: str | None, max_quotes: int = DEFAULT_MAX_QUOTES) -> Verdict | None:
    """The evidence profile's verdict: the JSON object's, else the text format's last [[A]]/[[B]]/[[C]]."""
    found = _evidence_reply(reply, max_quotes)
    return None if found is None else found.decision  # type: ignore[return-value]


def evidence_quotes(reply: str | None, max_quotes: int = DEFAULT_MAX_QUOTES) -> tuple[Quote, ...]:
    found = _evidence_reply(reply, max_quotes)
    return () if found is None else found.quotes


PROFILES: dict[str, JudgeProfile] = {
    DEFAULT: JudgeProfile(
        DEFAULT, "Default (LEval Studio's prompt, last verdict token)", parse_verdict, None, None, True, None, None),
    LEVAL: JudgeProfile(
        LEVAL, "leval (L-Eval's llm_eval.py exactly)", parse_verdict_leval, 2048, 1, False, LEVAL_TEMPLATE, 0.0),
    EVIDENCE: JudgeProfile(
        EVIDENCE, "evidence (reads the document; every quote is checked)", parse_verdict_evidence, REPLY_TOKENS,
        None, True, None, None, shows_document=True, quotes=evidence_quotes,
        response_format=verdict_format(DEFAULT_MAX_QUOTES)),
}


def get_profile(name: str | None) -> JudgeProfile:
    """Return the named profile (None: the default); raise ValueError for an unknown name."""
    profile = PROFILES.get(name or DEFAULT)
    if profile is None:
        raise ValueError(f"unknown judge profile {name!r}; choose one of {', '.join(PROFILES)}")
    return profile


def _difference(topic: str, leval: str, default: str) -> dict[str, str]:
    return {"topic": topic, "leval": leval, "default": default}


# Every difference between the two profiles, for the judge page, the CLI and the QUIRKS list.
DIFFERENCES: tuple[dict[str, str], ...] = (
    _difference("Prompt", "L-Eval's pair-v2 system prompt and user template, verbatim; not editable.",
                "LEval Studio's prompt (\"## Question\" sections, the same instructions reworded); editable in "
                "versions."),
    _difference("Verdict", "\"[[A]]\" anywhere in the reply, else \"[[B]]\", else \"[[C]]\" (exact substrings, in "
                "that order): a reply quoting the format before its final \"[[B]]\" reads as A; \"[[ B ]]\" is an "
                "error.", "The last [[A]]/[[B]]/[[C]] token; spaces inside the brackets are accepted."),
    _difference("Call", "max_tokens=2048, n=1, temperature 0 (other temperatures are refused).",
                "No max_tokens; the run's temperature (0 by default)."),
    _difference("Identical answers", "Judged like any pair (llm_eval.py calls the API for them).",
                "A tie in both orders without a call."),
    _difference("Rows of a file (judge command)", "llm_eval.py's reading: lines that are not JSON or have no "
                "evaluation are dropped (listed, not silent); if any row is \"f1\" or \"rouge\" only those are "
                "judged.", "Every row; a bad line is an error naming the line."),
    _difference("Pairing (judge command)", "By the raw text query + gt (whitespace counts; a later duplicate "
                "battle row replaces an earlier one; both files must keep as many rows); prediction key: the "
                "first key containing _pred, the battle file's last.", "By the whitespace-folded (query, gt); a "
                "repeated pair in a file is an error; exactly one key ending in _pred."),
    _difference("Same model on both sides", "When both files use the same prediction key, the battle file's "
                "answer is judged against itself and every win counts for that one name: its win rate is "
                "(wins + ties/2) / (wins + ties).", "A system cannot be judged against itself."),
    _difference("Errors", "A reply without a verdict (or a failed call) counts as an error and is dropped from "
                "the win rate.", "Same count; the job is marked failed so a resume retries the error rows."),
    _difference("Cache", "Judgments are cached by content like any other (llm_eval.py calls every time; with a "
                "deterministic judge the counts are equal).", "Cached by content."),
)


def _shared(topic: str, llm_eval: str, both: str) -> dict[str, str]:
    return {"topic": topic, "llm_eval": llm_eval, "both": both}


# Where both profiles, leval included, depart from llm_eval.py. None changes a verdict or a count of a
# deterministic judge; they are how a call is made and a number is shown.
SHARED_DEVIATIONS: tuple[dict[str, str], ...] = (
    _shared("Client", "The pre-1.0 openai package's openai.ChatCompletion.create, against OpenAI.",
            "The openai client (1.x) against any OpenAI-compatible base URL; the request carries the same model, "
            "messages and, under leval, n, temperature and max_tokens."),
    _shared("Judge model", "gpt-4 or gpt-3.5-turbo only.", "Any model the endpoint serves."),
    _shared("Failed calls", "Up to 16 attempts 0.8 s apart, then the reply \"$ERROR$\", counted as an error.",
            "The client's retries (the settings' count, backing off and honouring Retry-After), then an error "
            "row, counted as an error."),
    _shared("Order of calls", "One call at a time, each pair in both orders.",
            "Up to the run's concurrency at once; every pair still in both orders, so the counts are the same."),
    _shared("Win rate", "Printed as a fraction for every name that won at least once.",
            "Shown in percent with the profile named; the judge command under leval also prints llm_eval.py's "
            "counts and rate for each name."),
)

# Both lists in the shape of app.core.metrics.QUIRKS: "official" is the leval profile (the reference
# script's behaviour), "fixed" the default profile; a shared deviation is the same in both.
QUIRKS: tuple[dict, ...] = tuple(
    {"id": "judge_" + d["topic"].split(" (")[0].lower().replace(" ", "_"), "metric": "judge",
     "official": d["leval"], "fixed": d["default"], "changed": True}
    for d in DIFFERENCES
) + tuple(
    {"id": "judge_" + d["topic"].lower().replace(" ", "_"), "metric": "judge",
     "official": f"llm_eval.py: {d['llm_eval']} Here: {d['both']}", "fixed": "Same.", "changed": False}
    for d in SHARED_DEVIATIONS
)
