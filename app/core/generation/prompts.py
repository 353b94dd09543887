"""Build a question's chat messages the way L-Eval's ``Baselines/turbo16k-test.py`` does.

The ``leval`` profile is that script's prompts at L-Eval's HEAD: one system message chosen by
task, then one user message that holds the (already truncated) document and the instruction.
The profile is data, so a researcher can edit it; every edit is a new version with its own
fingerprint. Which template a question gets (the *branch*) is a rule of L-Eval's script and
stays in code:

* ``gsm100`` and ``codeU``: the user message is ``document + "\\n\\n" + instruction``;
* exam questions (``evaluation == "exam"``, and the closed tasks L-Eval names): the exam
  template, which asks for the answer only;
* every other question: the open template, with the length instruction
  (``The suggested output length is around N words.``, N = ``len(reference.split())``)
  when the run asks for it;
* ``sci_fi`` questions get a second, follow-up call asking the same question about the real
  world; the answer is ``first + " [fact: " + second + "]"``.
"""
from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Mapping

SYSTEM_KEYS = ("gsm100", "topic_retrieval_longchat", "coursera", "codeU", "sci_fi", "exam", "open")
TEMPLATE_KEYS = ("few_shot", "exam", "open", "open_length", "fact")
PLACEHOLDERS = ("document", "instruction", "words")
_PLACEHOLDER_PATTERN = re.compile(r"\{(" + "|".join(PLACEHOLDERS) + r")\}")
_REQUIRED = {
    "few_shot": ("document", "instruction"),
    "exam": ("document", "instruction"),
    "open": ("document", "instruction"),
    "open_length": ("document", "instruction", "words"),
    "fact": ("instruction",),
}

# Tasks whose prompt L-Eval special-cases by name (Baselines/LEval_config.py, get_sys_prompt).
FEW_SHOT_TASKS = ("gsm100", "codeU")
NAMED_EXAM_TASKS = ("gsm100", "topic_retrieval_longchat", "coursera", "codeU", "sci_fi")
FACT_CHECK_TASK = "sci_fi"
# L-Eval cuts code from the left (keeps the end, where the calls are): `"code" in file_name`.
KEEP_END_TASKS = ("codeU",)

_OPEN_SYSTEM = (
    "Now you are given a very long document. Please follow the instruction after this document. "
    "These instructions may include summarizing a document, answering questions based on the "
    "document, or writing a required paragraph. "
)
# Quoted from the script, typos included ("sinlge"): they are part of what the models saw.
LEVAL_SYSTEMS = {
    "gsm100": (
        "Given several question answer pairs, you need to follow a similar format to answer the "
        "last question. Make sure the response is end with The answer is _ . "
    ),
    "topic_retrieval_longchat": (
        "Below is a record of our previous conversation on many different topics. You are the "
        "ASSISTANT, and I am the USER. At the beginning of each topic, the USER will say 'I would "
        "like to discuss the topic of <TOPIC>'. Memorize each <TOPIC>. At the end of the record, I "
        "will ask you to retrieve the first/second/third topic names. Now the record start. "
    ),
    "coursera": (
        "Now you are given a very long document. Please follow the instruction based on this "
        "document. For multi-choice questions, there could be a sinlge correct option or multiple "
        "correct options. Please only provide the letter corresponding to the answer (like A or AB) "
        "when answering. "
    ),
    "codeU": (
        "Now you are given a code base consisting of a large amount of functions and the "
        "corresponding comments. In the end, I will call some functions defined in the code base. "
        "Please carefully read these codes and comments and answer the question."
    ),
    "sci_fi": (
        "Now you are given a scientific fiction. I will ask you some questions and the answer "
        "should be \"True\" or \"False\". Notice that you should answer the question based on the "
        "evidence in the document instead of your background knowledge."
    ),
    "exam": (
        "Now you are given a very long document. Please follow the instruction based on this "
        "document. For multi-choice questions, there is only a sinlge correct option. Please only "
        "provide the letter corresponding to the answer (like A or B) when answering. For other "
        "questions, please directly give the concise and accurate answer. "
    ),
    "open": _OPEN_SYSTEM,
}
LEVAL_TEMPLATES = {
    "few_shot": "{document}\n\n{instruction}",
    "exam": (
        "Document is as follows. {document} Question: {instruction} \n"
        "Please directly give answer without any additional output or explanation\n Answer: "
    ),
    # Without the length instruction: the form of the published turbo-16k-0613 financial_qa file.
    "open": "Document is as follows. {document} Instruction: {instruction} Output: ",
    "open_length": (
        "Document is as follows. {document} Instruction: {instruction} "
        "The suggested output length is around {words} words. Output: "
    ),
    "fact": "{instruction}\nPlease directly give answer without any additional output or explanation \nAnswer:",
}
FACT_REPLACE = (
    "based on the world described in the document.",
    "based on the real-world knowledge and facts up until your last training",
)
# The length sentence as L-Eval's other Baselines word it (offered as presets for open_length).
LENGTH_WORDINGS = {
    "turbo16k": "The suggested output length is around {words} words. Output: ",
    "claude/llama2/chatglm2/xgen": "\nAnswer this question with {words} words.",
    "vicuna/longchat/mpt": "The suggested output length is around {words} words. ",
}


@dataclass(frozen=True)
class PromptProfile:
    """A versioned prompt set; ``with_edits`` yields the next version."""

    name: str
    version: int
    systems: Mapping[str, str]
    templates: Mapping[str, str]
    fact_replace: tuple[str, str] = FACT_REPLACE

    def __post_init__(self) -> None:
        object.__setattr__(self, "systems", MappingProxyType(dict(self.systems)))
        object.__setattr__(self, "templates", MappingProxyType(dict(self.templates)))
        object.__setattr__(self, "fact_replace", tuple(self.fact_replace))

    def content(self) -> dict:
        """Return the prompt text as plain data (what the fingerprint covers)."""
        return {
            "systems": dict(self.systems),
            "templates": dict(self.templates),
            "fact_replace": list(self.fact_replace),
        }

    def fingerprint(self) -> str:
        """Return the sha256 of the prompt text: the version hash of manifests and cache keys."""
        canonical = json.dumps(self.content(), ensure_ascii=False, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(canonical.encode("utf-8")).hexdigest()

    def with_edits(
        self,
        systems: Mapping[str, str] | None = None,
        templates: Mapping[str, str] | None = None,
        fact_replace: tuple[str, str] | None = None,
    ) -> PromptProfile:
        """Return the next version with the given entries replaced (validated)."""
        edited = replace(
            self,
            version=self.version + 1,
            systems={**self.systems, **(systems or {})},
            templates={**self.templates, **(templates or {})},
            fact_replace=self.fact_replace if fact_replace is None else fact_replace,
        )
        validate_profile(edited)
        return edited


LEVAL_PROFILE = PromptProfile(name="leval", version=1, systems=LEVAL_SYSTEMS, templates=LEVAL_TEMPLATES)


def validate_profile(profile: PromptProfile) -> None:
    """Raise ValueError naming the entry unless every system and template is usable."""
    for key in SYSTEM_KEYS:
        if not isinstance(profile.systems.get(key), str):
            raise ValueError(f"system prompt {key!r} is missing")
    unknown = sorted(set(profile.systems) - set(SYSTEM_KEYS)) + sorted(set(profile.templates) - set(TEMPLATE_KEYS))
    if unknown:
        raise ValueError(f"unknown prompt entries: {', '.join(unknown)}")
    for key in TEMPLATE_KEYS:
        text = profile.templates.get(key)
        if not isinstance(text, str):
            raise ValueError(f"template {key!r} is missing")
        found = _PLACEHOLDER_PATTERN.findall(text)
        for name in _REQUIRED[key]:
            if found.count(name) != 1:
                raise ValueError(f"template {key!r} must contain {{{name}}} exactly once")
        extra = sorted(set(found) - set(_REQUIRED[key]))
        if extra:
            raise ValueError(f"template {key!r} cannot use {', '.join('{' + n + '}' for n in extra)}")
    if len(profile.fact_replace) != 2 or not all(isinstance(s, str) for s in profile.fact_replace):
        raise ValueError("fact_replace must be two strings")


def _fill(template: str, values: Mapping[str, str]) -> str:
    # One regex pass, not str.format: a document may contain "{instruction}" or any brace,
    # and must never be substituted into again.
    return _PLACEHOLDER_PATTERN.sub(lambda m: values[m.group(1)], template)


def reference_words(reference: str) -> int:
    """Return N of the length instruction: the reference's words, as ``len(out.split())``."""
    return len(reference.split())


@dataclass(frozen=True)
class Question:
    """What the prompt depends on: task, evaluation kind, instruction and reference."""

    task: str
    evaluation: str
    instruction: str
    reference: str


@dataclass(frozen=True)
class PromptPlan:
    """The calls for one question and the ``prompt`` value L-Eval writes beside the answer."""

    branch: str  # few_shot | exam | open | open_length
    system_key: str
    messages: tuple[Mapping[str, str], ...]
    recorded_prompt: str
    length_words: int | None = None
    followup: str | None = None  # sci_fi: the real-world question asked after the first answer

    def followup_messages(self) -> list[dict[str, str]] | None:
        """Return the second call's messages: the first call's, then the follow-up (no reply between)."""
        if self.followup is None:
            return None
        return [dict(m) for m in self.messages] + [{"role": "user", "content": self.followup}]


def is_exam(question: Question) -> bool:
    return question.evaluation == "exam" or question.task in NAMED_EXAM_TASKS


def system_key(question: Question) -> str:
    """Pick the system prompt as get_sys_prompt does, by task first, then by exam or open."""
    if question.task in NAMED_EXAM_TASKS:
        return question.task
    return "exam" if is_exam(question) else "open"


def branch(question: Question, length_instruction: bool) -> str:
    if question.task in FEW_SHOT_TASKS:
        return "few_shot"
    if is_exam(question):
        return "exam"
    return "open_length" if length_instruction else "open"


def keeps_end(task: str) -> bool:
    """Tell whether truncation keeps the document's end (code) rather than its start."""
    return task in KEEP_END_TASKS


def build(profile: PromptProfile, question: Question, document: str, length_instruction: bool) -> PromptPlan:
    """Return the chat messages for ``question`` over ``document`` (already truncated)."""
    sys_key = system_key(question)
    system = profile.systems[sys_key]
    chosen = branch(question, length_instruction)
    words = reference_words(question.reference) if chosen == "open_length" else None
    template = profile.templates[chosen]
    values = {"document": document, "instruction": question.instruction, "words": str(words)}
    user = _fill(template, values)
    if chosen == "few_shot":
        recorded = system + question.instruction
    else:
        recorded = system + _fill(template, {"document": "{}", "instruction": "{}", "words": str(words)})
    followup = None
    if question.task == FACT_CHECK_TASK:
        old, new = profile.fact_replace
        followup = _fill(profile.templates["fact"], {"instruction": question.instruction.replace(old, new)})
    messages = ({"role": "system", "content": system}, {"role": "user", "content": user})
    return PromptPlan(chosen, sys_key, messages, recorded, words, followup)


def combine_fact(answer: str, fact_answer: str) -> str:
    """Join a sci_fi answer and its real-world follow-up as L-Eval stores them."""
    return answer + f" [fact: {fact_answer}]"


def document_overhead(profile: PromptProfile, question: Question, length_instruction: bool) -> list[str]:
    """Return the message texts of a question's calls with an empty document (for fit budgets)."""
    plan = build(profile, question, "", length_instruction)
    texts = [m["content"] for m in plan.messages]
    if plan.followup is not None:
        texts.append(plan.followup)
    return texts
