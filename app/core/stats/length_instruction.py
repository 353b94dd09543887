"""L-Eval's length instruction ("LIE"): tell the model how many words the reference has.

L-Eval appends the instruction after the question, separated by a space, and
counts words as whitespace-separated tokens of the reference answer. Its
README phrases it as "We need a N words summary"; its baseline scripts use
the variants kept in UPSTREAM_TEMPLATES, so imported prompts in any of the
phrasings can be recognised.
"""

from __future__ import annotations

import re

from app.core.text import word_count

LENGTH_INSTRUCTION_TEMPLATE = "We need a {n}-word answer."

# Phrasings found in prompts L-Eval's own baseline scripts saved with their predictions.
UPSTREAM_TEMPLATES: dict[str, str] = {
    "leval_chat_api": "The suggested output length is around {n} words.",
    "leval_llama2": "Answer this question with {n} words.",
}

_DETECTORS = (
    re.compile(r"We need an? (\d+)[- ]words? (?:answer|summary)", re.IGNORECASE),
    re.compile(r"suggested output length is around (\d+) words", re.IGNORECASE),
    re.compile(r"Answer this question with (\d+) words", re.IGNORECASE),
)


# L-Eval's N is the reference's whitespace-separated word count, the same count as everywhere else.
reference_word_count = word_count


def length_instruction(reference: str, template: str = LENGTH_INSTRUCTION_TEMPLATE) -> str:
    """Return the length instruction for a reference answer, e.g. 'We need a 12-word answer.'."""
    n_words = reference_word_count(reference)
    if n_words == 0:
        raise ValueError("the reference answer is empty: no length to instruct")
    return template.format(n=n_words)


def with_length_instruction(
    instruction: str, reference: str, template: str = LENGTH_INSTRUCTION_TEMPLATE
) -> str:
    """Append the length instruction to a question, as L-Eval's length-instructed prompts do."""
    return f"{instruction.rstrip()} {length_instruction(reference, template)}"


def detected_word_target(prompt: str) -> int | None:
    """Return N if the prompt carries a length instruction in any known phrasing, else None."""
    for detector in _DETECTORS:
        match = detector.search(prompt)
        if match:
            return int(match.group(1))
    return None
