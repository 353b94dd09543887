"""The rater's prompt: versioned, content-fingerprinted, rendered to chat messages."""
from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass

PLACEHOLDERS: tuple[str, ...] = ("question", "references", "answer")
OPTIONAL_PLACEHOLDERS: tuple[str, ...] = ("rubric", "document", "max_quotes")
_PLACEHOLDER = re.compile(r"\{(" + "|".join(PLACEHOLDERS + OPTIONAL_PLACEHOLDERS) + r")\}")
SCORE_FORMAT = "[[N]]"

DEFAULT_SYSTEM = (
    "You are an expert annotator. You rate one AI assistant's answer to a question about a long document "
    "that you are not shown. You are given the question, the reference answers written for it, and the "
    "assistant's answer. Rate the answer from 1 to 5 with this rubric, exactly as the human annotators do:\n"
    "{rubric}\n"
    "Compare the answer with the references: information the references do not support is not a merit, and "
    "factual errors weigh more than missing detail. Do not let the answer's length sway you. Explain your "
    "reasoning briefly, then give your rating in exactly this format: \"[[N]]\", where N is 1, 2, 3, 4 or 5."
)
DEFAULT_USER = (
    "## Question\n{question}\n\n"
    "## References\n{references}\n\n"
    "## The assistant's answer\n{answer}\n\n"
    "## End of the answer\n"
    "Rate the answer from 1 to 5."
)


@dataclass(frozen=True)
class RatingItem:
    """One answer to rate, with the question and the references shown for it (label, text)."""

    item_id: object
    question: str
    references: tuple[tuple[str, str], ...]
    answer: str
    document: str = ""  # the `evidence` profile: the document as the prompt shows it (cut to the context)
    document_sha: str = ""  # the stored document's fingerprint, part of the cache key


@dataclass(frozen=True)
class RaterTemplate:
    name: str
    version: int
    system: str
    user_template: str

    def fingerprint(self) -> str:
        canonical = json.dumps({"system": self.system, "user_template": self.user_template}, ensure_ascii=False,
                               sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


DEFAULT_RATER_TEMPLATE = RaterTemplate("studio-rater", 1, DEFAULT_SYSTEM, DEFAULT_USER)

EVIDENCE_SYSTEM = (
    "You are an expert annotator. You rate one AI assistant's answer to a question about a long document, "
    "which you are given. You are also given the question, the reference answers written for it, and the "
    "assistant's answer. Rate the answer from 1 to 5 with this rubric, exactly as the human annotators do:\n"
    "{rubric}\n"
    "Check the answer against the document and the references. Back your rating with up to {max_quotes} "
    "verbatim quotes from the document, each copied exactly, character for character, and marked \"supports\" "
    "(the document confirms the answer) or \"contradicts\" (the document refutes it). Never paraphrase a quote "
    "and never quote the answer or the references. Do not let the answer's length sway you.\n"
    "Reply with a JSON object: {\"reasoning\": \"...\", \"quotes\": [{\"quote\": \"...\", \"stance\": "
    "\"supports\"}], \"score\": N}. If you cannot reply in JSON, write one line per quote as "
    "\"QUOTE supports: <quote>\" or \"QUOTE contradicts: <quote>\", then the rating in exactly this format: "
    "\"[[N]]\", where N is 1, 2, 3, 4 or 5."
)
EVIDENCE_USER = (
    "## Document\n{document}\n\n## End of the document\n\n"
    "## Question\n{question}\n\n"
    "## References\n{references}\n\n"
    "## The assistant's answer\n{answer}\n\n"
    "## End of the answer\n"
    "Rate the answer from 1 to 5, with up to {max_quotes} verbatim quotes from the document."
)
EVIDENCE_RATER_TEMPLATE = RaterTemplate("studio-rater-evidence", 1, EVIDENCE_SYSTEM, EVIDENCE_USER)


def is_evidence(template: RaterTemplate) -> bool:
    """The `evidence` profile's prompts show the document; the reference-only ones never do."""
    return "{document}" in template.user_template


def validate_template(template: RaterTemplate) -> None:
    """Raise ValueError unless the template names every input and asks for the score format."""
    found = set(_PLACEHOLDER.findall(template.system + template.user_template))
    missing = [name for name in PLACEHOLDERS if name not in set(_PLACEHOLDER.findall(template.user_template))]
    if missing:
        raise ValueError("user template lacks placeholders: " + ", ".join("{" + m + "}" for m in missing))
    if "rubric" not in found:
        raise ValueError("the prompt must include {rubric}, the annotators' scale")
    if SCORE_FORMAT not in template.system + template.user_template:
        raise ValueError(f"the prompt must ask for the rating as {SCORE_FORMAT}")


def format_rubric(rubric: Sequence[tuple[int, str, str]]) -> str:
    return "\n".join(f"{value} ({word}): {description}" for value, word, description in rubric)


def format_references(references: Sequence[tuple[str, str]]) -> str:
    if not references:
        return "(none shown)"
    return "\n\n".join(f"[{label}]\n{text}" for label, text in references)


def render(template: RaterTemplate, item: RatingItem, rubric: Sequence[tuple[int, str, str]],
           max_quotes: int = 3) -> list[dict[str, str]]:
    """Chat messages (system, user); one regex pass, so an answer containing "{answer}" stays as written."""
    values = {"question": item.question, "references": format_references(item.references), "answer": item.answer,
              "rubric": format_rubric(rubric), "document": item.document, "max_quotes": max_quotes}

    def fill(text: str) -> str:
        return _PLACEHOLDER.sub(lambda match: str(values[match.group(1)]), text)

    return [{"role": "system", "content": fill(template.system)}, {"role": "user", "content": fill(template.user_template)}]
