"""Judge prompt templates: versioned, content-fingerprinted, rendered to chat messages.

The judge sees the question, the human reference answer and the two assistants'
answers; it never sees the long document (as in L-Eval's pairwise judging).
"""
from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, replace
from typing import Literal

Order = Literal["AB", "BA"]
# "AB": the system under test is assistant A; "BA": it is assistant B.
ORDERS: tuple[Order, Order] = ("AB", "BA")

PLACEHOLDERS: tuple[str, ...] = ("question", "reference", "answer_a", "answer_b")
# L-Eval's own template calls the reference {ref_answer}; both names are accepted.
PLACEHOLDER_ALIASES = {"ref_answer": "reference"}
# The `evidence` profile's prompts also show the document (cut to the judge's context) and the quote limit.
EVIDENCE_PLACEHOLDERS: tuple[str, ...] = ("document", "max_quotes")
_PLACEHOLDER_PATTERN = re.compile(
    r"\{(" + "|".join((*PLACEHOLDERS, *PLACEHOLDER_ALIASES, *EVIDENCE_PLACEHOLDERS)) + r")\}")

# L-Eval's length-bias instruction, quoted word for word as the issue and L-Eval's README give it.
LEVAL_INSTRUCTION = (
    "Additional details or information that are not mentioned in the reference answer "
    "cannot be considered as advantages and do not let them sway your judgment."
)

DEFAULT_SYSTEM_PROMPT = (
    "You are an impartial judge. Two AI assistants answered a user's question about a long "
    "document that you are not shown. You are given the question, a reference answer written "
    "by a human, and the answers of assistant A and assistant B. Decide which assistant "
    "answered better. Start by comparing each assistant's answer with the reference answer. "
    f"{LEVAL_INSTRUCTION} "
    "Relevance to the question matters, but avoiding factual errors with respect to the "
    "reference answer matters more than detail. Do not let the order in which the answers are "
    "presented, their length, or the assistants' names influence you. Be as objective as "
    "possible. Explain your reasoning briefly, then give your final verdict in exactly this "
    'format: "[[A]]" if assistant A is better, "[[B]]" if assistant B is better, '
    'or "[[C]]" for a tie.'
)

DEFAULT_USER_TEMPLATE = (
    "## Question\n{question}\n\n"
    "## Reference answer (written by a human)\n{reference}\n\n"
    "## Assistant A's answer\n{answer_a}\n\n"
    "## Assistant B's answer\n{answer_b}\n\n"
    "## End of answers\n"
    "Compare both answers with the reference answer and give your verdict."
)


@dataclass(frozen=True)
class PairItem:
    """One pair to judge: the system's and the baseline's answers to the same question."""

    pair_id: str | int
    question: str
    reference: str
    system_answer: str
    baseline_answer: str
    document: str = ""  # the `evidence` profile: the document as the prompt shows it (cut to the context)
    document_key: str = ""  # ... and its fingerprint with the cut's, part of the cache key


@dataclass(frozen=True)
class PromptTemplate:
    """A judge prompt version; edit with `with_edits`, which yields the next version."""

    name: str
    version: int
    system: str
    user_template: str

    def fingerprint(self) -> str:
        """Return a sha256 of the prompt text, usable as the prompt part of a cache key."""
        canonical = json.dumps(
            {"system": self.system, "user_template": self.user_template},
            ensure_ascii=False,
            sort_keys=True,
            separators=(",", ":"),
        )
        return hashlib.sha256(canonical.encode("utf-8")).hexdigest()

    def with_edits(self, *, system: str | None = None, user_template: str | None = None) -> PromptTemplate:
        """Return the next version of this prompt with the given parts replaced."""
        edited = replace(
            self,
            version=self.version + 1,
            system=self.system if system is None else system,
            user_template=self.user_template if user_template is None else user_template,
        )
        validate_template(edited)
        return edited


DEFAULT_TEMPLATE = PromptTemplate(
    name="studio-pairwise",  # LEval Studio's own prompt; L-Eval's is profiles.LEVAL_TEMPLATE
    version=1,
    system=DEFAULT_SYSTEM_PROMPT,
    user_template=DEFAULT_USER_TEMPLATE,
)

# The `evidence` profile's prompt: the judge reads the document and backs its verdict with quotes.
EVIDENCE_SYSTEM_PROMPT = (
    "You are an impartial judge. Two AI assistants answered a user's question about a long document, which "
    "you are given, together with a reference answer written by a human and the answers of assistant A and "
    "assistant B. Decide which assistant answered better. Check each answer against the document and the "
    "reference: avoiding factual errors matters more than detail. Do not let the order of the answers, their "
    "length, or the assistants' names influence you. For each answer give up to {max_quotes} verbatim quotes "
    "from the document, each copied exactly, character for character, and marked \"supports\" (the document "
    "confirms the answer) or \"contradicts\" (the document refutes it); never paraphrase a quote and never "
    "quote the answers or the reference.\n"
    "Reply with a JSON object: {\"reasoning\": \"...\", \"quotes\": [{\"answer\": \"A\", \"quote\": \"...\", "
    "\"stance\": \"supports\"}], \"verdict\": \"A\"}, where the verdict is \"A\", \"B\" or \"C\" for a tie. If you "
    "cannot reply in JSON, write one line per quote as \"QUOTE A supports: <quote>\" (A or B, supports or "
    "contradicts), then your final verdict in exactly this format: \"[[A]]\" if assistant A is better, "
    "\"[[B]]\" if assistant B is better, or \"[[C]]\" for a tie."
)
EVIDENCE_USER_TEMPLATE = (
    "## Document\n{document}\n\n## End of the document\n\n"
    "## Question\n{question}\n\n"
    "## Reference answer (written by a human)\n{reference}\n\n"
    "## Assistant A's answer\n{answer_a}\n\n"
    "## Assistant B's answer\n{answer_b}\n\n"
    "## End of answers\n"
    "Compare both answers with the document and the reference, quote the document, and give your verdict."
)
EVIDENCE_TEMPLATE = PromptTemplate(name="studio-pairwise-evidence", version=1, system=EVIDENCE_SYSTEM_PROMPT,
                                   user_template=EVIDENCE_USER_TEMPLATE)


def validate_template(template: PromptTemplate) -> None:
    """Raise ValueError unless the template can be rendered and asks for a verdict."""
    found = {PLACEHOLDER_ALIASES.get(name, name) for name in _PLACEHOLDER_PATTERN.findall(template.user_template)}
    missing = [name for name in PLACEHOLDERS if name not in found]
    if missing:
        raise ValueError(f"user template lacks placeholders: {', '.join('{' + m + '}' for m in missing)}")
    prompt_text = template.system + template.user_template
    for token in ("[[A]]", "[[B]]", "[[C]]"):
        if token not in prompt_text:
            raise ValueError(f"prompt must ask for the verdict token {token}")


def answers_in_order(item: PairItem, order: Order) -> tuple[str, str]:
    """Return (answer_a, answer_b) for the given presentation order."""
    if order == "AB":
        return item.system_answer, item.baseline_answer
    if order == "BA":
        return item.baseline_answer, item.system_answer
    raise ValueError(f"order must be 'AB' or 'BA', not {order!r}")


def render(
    template: PromptTemplate, question: str, reference: str, answer_a: str, answer_b: str, document: str = "",
    max_quotes: int = 3,
) -> list[dict[str, str]]:
    """Render the template into chat messages (system, user)."""
    values = {"question": question, "reference": reference, "answer_a": answer_a, "answer_b": answer_b,
              "document": document, "max_quotes": max_quotes}
    # One regex pass rather than str.format: user templates may contain other braces,
    # and an answer that happens to contain "{answer_b}" must not be substituted again.
    def fill(text: str) -> str:
        return _PLACEHOLDER_PATTERN.sub(
            lambda match: str(values[PLACEHOLDER_ALIASES.get(match.group(1), match.group(1))]), text)

    # The system message is filled only when it names the quote limit (the evidence prompt does), so every
    # other prompt's messages stay exactly as they were.
    system = fill(template.system) if "{max_quotes}" in template.system else template.system
    return [{"role": "system", "content": system}, {"role": "user", "content": fill(template.user_template)}]


def render_pair(template: PromptTemplate, item: PairItem, order: Order, max_quotes: int = 3) -> list[dict[str, str]]:
    """Render the messages judging `item` in `order` (with its document and quote limit, under the evidence
    profile)."""
    answer_a, answer_b = answers_in_order(item, order)
    return render(template, item.question, item.reference, answer_a, answer_b, item.document, max_quotes)


def is_evidence(template: PromptTemplate) -> bool:
    """The `evidence` profile's prompts show the document; no other profile's do."""
    return "{document}" in template.user_template
