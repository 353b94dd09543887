"""Test oracle: an independent re-statement of L-Eval's ``Baselines/turbo16k-test.py``.

It follows the script (and ``Baselines/LEval_config.py``: ``get_sys_prompt``,
``build_key_data_pairs``, ``k_to_number``) step by step, with its file-name substring tests,
so that ``app.core.generation`` can be compared with it. The API call, printing, the confirmation
prompt, sleeping and retries are left out; the messages each call would send and the row
written beside the answer are kept. It lives in the test folder only and is never imported
by the application.
"""
from __future__ import annotations

from typing import Callable

MAX_NEW_TOKENS = 512
DATASETS_CLOSED_ENDED = ["coursera", "quality", "topic_retrieval_longchat", "tpo", "gsm100", "codeU", "sci_fi"]
DATASETS_OPEN_ENDED = ["financial_qa", "gov_report_summ", "legal_contract_qa", "meeting_summ", "multidoc_qa",
                       "narrative_qa", "natural_question", "news_summ", "paper_assistant", "patent_summ",
                       "review_summ", "scientific_qa", "tv_show_summ"]


def k_to_number(k_string: str) -> int:
    num = float(k_string.rstrip("k"))
    return int(num * 1000)


def get_sys_prompt(metric: str, file_name: str) -> str:
    if "gsm" in file_name:
        prompt = "Given several question answer pairs, you need to follow a similar format to answer the last question. Make sure the response is end with The answer is _ . "
    elif "topic" in file_name:
        prompt = "Below is a record of our previous conversation on many different topics. You are the ASSISTANT, and I am the USER. At the beginning of each topic, the USER will say 'I would like to discuss the topic of <TOPIC>'. Memorize each <TOPIC>. At the end of the record, I will ask you to retrieve the first/second/third topic names. Now the record start. "
    elif "coursera" in file_name:
        prompt = "Now you are given a very long document. Please follow the instruction based on this document. For multi-choice questions, there could be a sinlge correct option or multiple correct options. Please only provide the letter corresponding to the answer (like A or AB) when answering. "
    elif "codeU" in file_name:
        prompt = "Now you are given a code base consisting of a large amount of functions and the corresponding comments. In the end, I will call some functions defined in the code base. Please carefully read these codes and comments and answer the question."
    elif "sci_fi" in file_name:
        prompt = "Now you are given a scientific fiction. I will ask you some questions and the answer should be \"True\" or \"False\". Notice that you should answer the question based on the evidence in the document instead of your background knowledge."
    elif "exam" in metric:
        prompt = "Now you are given a very long document. Please follow the instruction based on this document. For multi-choice questions, there is only a sinlge correct option. Please only provide the letter corresponding to the answer (like A or B) when answering. For other questions, please directly give the concise and accurate answer. "
    else:
        prompt = "Now you are given a very long document. Please follow the instruction after this document. These instructions may include summarizing a document, answering questions based on the document, or writing a required paragraph. "
    return prompt


def subset_rows(metric: str, open_task_files: dict[str, list[dict]]) -> list[dict]:
    """Return the document lines build_key_data_pairs gives the llm/human metrics, in its order."""
    data_all: list[dict] = []
    for gen_data in DATASETS_OPEN_ENDED:
        data = open_task_files.get(gen_data, [])
        if metric == "llm_turbo_eval":
            data = [d for d in data if d["evaluation"] == "human" or d["evaluation"] == "LLM"]
        elif "gpt4" in metric:
            data = [d for d in data if d["evaluation"] == "LLM"]
        else:
            data = [d for d in data if d["evaluation"] == "human"]
        data_all += data
    return data_all


def task_rows(metric: str, task_name: str, task_files: dict[str, list[dict]], *, task_name_given: bool = False) -> list[dict]:
    """Return the lines build_key_data_pairs gives one task's file: all of them with --task_name,
    else (the default run over every task) those not marked human or LLM."""
    data = task_files.get(task_name, [])
    if task_name_given:
        return list(data)
    datasets_eval = DATASETS_OPEN_ENDED if metric == "ngram_eval" else DATASETS_CLOSED_ENDED
    if task_name not in datasets_eval:
        return []
    return [d for d in data if d["evaluation"] != "human" and d["evaluation"] != "LLM"]


def truncate_document(document: str, file_name: str, max_length: int, num_tokens: Callable[[str], int]) -> str:
    cnt = 0
    while num_tokens(document) > max_length:
        if "code" not in file_name:
            document = " ".join(document.split(" ")[:max_length - cnt])  # chunk the input len from right
        else:
            document = " ".join(document.split(" ")[cnt - max_length:])  # chunk the input len from left
        cnt += 250
    return document


def run_file(metric: str, file_name: str, data: list[dict], model_key: str, max_length: int,
             num_tokens: Callable[[str], int]) -> list[dict]:
    """Return, per question, the messages of each call and the row the script writes.

    Each answer is faked as ``"<answer N>"`` (and ``"<fact N>"`` for the follow-up) so that the
    written row can be compared too.
    """
    sys_prompt = get_sys_prompt(metric, file_name)
    out = []
    n = 0
    for d in data:
        document = truncate_document(d["input"], file_name, max_length, num_tokens)
        for inst, gt in zip(d["instructions"], d["outputs"]):
            messages = [{"role": "system", "content": sys_prompt}]
            save_d = {"query": inst, "gt": gt}
            if "gsm" in file_name or "codeU" in file_name:
                messages.append({"role": "user", "content": document + "\n\n" + inst})
                save_d["prompt"] = sys_prompt + inst
            elif metric == "exam_eval":
                context = "Document is as follows. {} Question: {} \nPlease directly give answer without any additional output or explanation\n Answer: "
                messages.append({"role": "user", "content": context.format(document, inst)})
                save_d["prompt"] = sys_prompt + context
            else:
                context = "Document is as follows. {} Instruction: {} " + f"The suggested output length is around {len(gt.split())} words. Output: "
                messages.append({"role": "user", "content": context.format(document, inst)})
                save_d["prompt"] = sys_prompt + context
            first_call = [dict(m) for m in messages]
            ret = f"<answer {n}>".strip()
            save_d[f"{model_key}_pred"] = ret
            save_d["evaluation"] = d["evaluation"]
            fact_call = None
            if "sci_fi" in file_name:
                text_inputs = inst.replace("based on the world described in the document.",
                                           "based on the real-world knowledge and facts up until your last training") + "\nPlease directly give answer without any additional output or explanation \nAnswer:"
                messages.append({"role": "user", "content": text_inputs})
                fact_call = [dict(m) for m in messages]
                save_d[f"{model_key}_pred"] += f" [fact: <fact {n}>]"
            out.append({"calls": [first_call] + ([fact_call] if fact_call else []), "row": save_d,
                        "document": document})
            n += 1
    return out
