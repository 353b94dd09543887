"""Where generation differs from L-Eval's Baselines scripts, and why.

Each entry: ``id``, ``area``, ``leval`` (what the reference script does), ``here`` (what the
``leval`` profile does) and ``changed`` (False when the profile keeps the reference behaviour).
"""
from __future__ import annotations


def _quirk(quirk_id: str, area: str, leval: str, here: str, changed: bool = True) -> dict:
    return {"id": quirk_id, "area": area, "leval": leval, "here": here, "changed": changed}


QUIRKS: tuple[dict, ...] = (
    _quirk("branch_by_file_name", "prompt",
           "The prompt and the truncation side are chosen by substrings of the output path "
           "(\"gsm\", \"topic\", \"coursera\", \"codeU\", \"sci_fi\", \"code\"), which includes the "
           "model's name: a model called \"codellama\" has every document cut from the left, and "
           "runs on the human/LLM subsets never see a task name.",
           "Chosen by the question's task and evaluation kind; a model's name changes nothing."),
    _quirk("exam_by_metric", "prompt",
           "The exam template and system prompt follow the --metric flag (exam_eval).",
           "Follow the question: evaluation \"exam\", or a closed task L-Eval names."),
    _quirk("length_instruction_always", "length",
           "turbo16k-test.py always adds \"The suggested output length is around N words.\" to "
           "open-ended questions; there is no switch.",
           "On or off per run. Off uses the wording of the published turbo-16k-0613 financial_qa "
           "prompts: \"Document is as follows. {} Instruction: {} Output: \"."),
    _quirk("document_only_budget", "truncation",
           "Only the document is counted against max_length - max_new_tokens; the system prompt, "
           "template and instruction come on top, so a prompt can exceed the context.",
           "The leval method does the same; the fit method subtracts the rest of the prompt too.",
           changed=False),
    _quirk("pieces_not_tokens", "truncation",
           "The cut keeps (budget - cnt) pieces of split(\" \"), cnt += 250 per round: pieces are "
           "not tokens, runs of spaces count as pieces, and a text without spaces is cut to nothing.",
           "The leval method does the same; the fit method keeps the most pieces (or characters) that fit.",
           changed=False),
    _quirk("tokenizer_fixed", "truncation",
           "turbo16k-test.py counts with gpt-3.5-turbo's encoding whatever the model; the other "
           "scripts with the model's own tokenizer.",
           "The model's tiktoken encoding for OpenAI names, else the documented estimate "
           "(recorded in the manifest)."),
    _quirk("special_tokens", "truncation",
           "tiktoken's encode() raises on \"<|endoftext|>\" inside a document.",
           "Counted as ordinary text."),
    _quirk("failed_question_dropped", "calls",
           "After 10 failed attempts a question is skipped silently and the file misses its row.",
           "A failed call is stored as an error, retried on resume, and reported; the download "
           "holds only answered questions and says how many are missing."),
    _quirk("fact_followup_without_reply", "prompt",
           "sci_fi's real-world follow-up is sent after the first user message without the "
           "model's first answer in between.",
           "Same.", changed=False),
    _quirk("additonal_typo", "prompt",
           "The published turbo-16k-0613 exam files were made with \"additonal\"; the script at "
           "HEAD says \"additional\".",
           "HEAD's wording.", changed=False),
)
