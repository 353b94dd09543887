"""OpenCompass's LongBench output as OpenCompass writes it, made at test time by restating its own code on the
synthetic LongBench rows of tests/support/longbench_data.py; and LongBench's own pred.py folder of the same answers.

Restated (not copied) from open-compass/opencompass at a5acc4bba3b658f151617a3b393602110fb7a740:

- ``opencompass/datasets/longbench/longbench_<dataset>.py``, ``LongBench<...>Dataset.load``: one loaded row per row
  of the data's test split, in order; gov_report, lcc, multi_news, passage_count and vcsum keep ``context`` and
  ``answers``; trec and lsht keep ``input``, ``context`` and ``all_labels`` = ``{"answers", "all_classes"}``; the
  others ``input``, ``context`` and ``answers``;
- ``opencompass/configs/datasets/longbench/longbench<dataset>/longbench_<dataset>_gen_<hash>.py``: ``abbr`` is
  ``'LongBench_' + name``, ``output_column`` is ``'all_labels'`` for trec and lsht and ``'answers'`` otherwise, and one
  HUMAN round whose prompt is the template below;
- ``opencompass/openicl/icl_inferencer/icl_gen_inferencer.py`` (``gold_ans = dataset['test'][output_column]``)
  and ``icl_base_inferencer.py``, ``GenInferencerOutputHandler.save_results``: each row is
  ``{"origin_prompt", "prediction"}`` under its index, plus ``"gold"`` when the gold is truthy.
"""
from __future__ import annotations

from pathlib import Path

from app.core.metrics.longbench import DATASETS
from tests.support.longbench_data import full_data_rows, model_rows, write_rows
from tests.support.opencompass import write_dataset

_PASSAGES = ("Answer the question based on the given passages. Only give me the answer and do not output any other "
             "words.\n\nThe following are given passages.\n{context}\n\nAnswer the question based on the given "
             "passages. Only give me the answer and do not output any other words.\n\nQuestion: {input}\nAnswer:")
PROMPTS = {
    "narrativeqa": "You are given a story, which can be either a novel or a movie script, and a question. Answer the "
                   "question as concisely as you can, using a single phrase if possible. Do not provide any "
                   "explanation.\n\nStory: {context}\n\nNow, answer the question based on the story as concisely as "
                   "you can, using a single phrase if possible. Do not provide any explanation.\n\nQuestion: {input}"
                   "\n\nAnswer:",
    "qasper": _PASSAGES, "hotpotqa": _PASSAGES, "2wikimqa": _PASSAGES, "musique": _PASSAGES,
    "multifieldqa_en": "Read the following text and answer briefly.\n\n{context}\n\nNow, answer the following question "
                       "based on the above text, only give me the answer and do not output any other words.\n\n"
                       "Question: {input}\nAnswer:",
    "multifieldqa_zh": "阅读以下文字并用中文简短回答：\n\n{context}\n\n现在请基于上面的文章回答下面的问题，只告诉我答案，不要输出任何其他字词。\n\n"
                       "问题：{input}\n回答：",
    "dureader": "请基于给定的文章回答下述问题。\n\n文章：{context}\n\n请基于上述文章回答下面的问题。\n\n问题：{input}\n回答：",
    "gov_report": "You are given a report by a government agency. Write a one-page summary of the report.\n\nReport:\n"
                  "{context}\n\nNow, write a one-page summary of the report.\n\nSummary:",
    "qmsum": "You are given a meeting transcript and a query containing a question or instruction. Answer the query in "
             "one or more sentences.\n\nTranscript:\n{context}\n\nNow, answer the query based on the above meeting "
             "transcript in one or more sentences.\n\nQuery: {input}\nAnswer:",
    "multi_news": "You are given several news passages. Write a one-page summary of all news. \n\nNews:\n{context}\n\n"
                  "Now, write a one-page summary of all the news.\n\nSummary:\n",
    "vcsum": "下面有一段会议记录，请你阅读后，写一段总结，总结会议的内容。\n会议记录：\n{context}\n\n会议总结：",
    "trec": "Please determine the type of the question below. Here are some examples of questions.\n\n{context}\n{input}",
    "triviaqa": "Answer the question based on the given passage. Only give me the answer and do not output any other "
                "words. The following are some examples.\n\n{context}\n\n{input}",
    "samsum": "Summarize the dialogue into a few short sentences. The following are some examples.\n\n{context}\n\n"
              "{input}",
    "lsht": "请判断给定新闻的类别，下面是一些例子。\n\n{context}\n{input}",
    "passage_count": "There are some paragraphs below sourced from Wikipedia. Some of them may be duplicates. Please "
                     "carefully read these paragraphs and determine how many unique paragraphs there are after "
                     "removing duplicates. In other words, how many non-repeating paragraphs are there in total?\n\n"
                     "{context}\n\nPlease enter the final count of unique paragraphs after removing duplicates. The "
                     "output format should only contain the number, such as 1, 2, 3, and so on.\n\nThe final answer "
                     "is: ",
    "passage_retrieval_en": "Here are 30 paragraphs from Wikipedia, along with an abstract. Please determine which "
                            "paragraph the abstract is from.\n\n{context}\n\nThe following is an abstract.\n\n{input}"
                            "\n\nPlease enter the number of the paragraph that the abstract is from. The answer format "
                            "must be like \"Paragraph 1\", \"Paragraph 2\", etc.\n\nThe answer is: ",
    "passage_retrieval_zh": "以下是若干段落文字，以及其中一个段落的摘要。请确定给定的摘要出自哪一段。\n\n{context}\n\n下面是一个摘要\n\n{input}\n\n"
                            "请输入摘要所属段落的编号。答案格式必须是\"段落1\"，\"段落2\"等格式\n\n答案是：",
    "lcc": "Please complete the code given below. \n{context}Next line of code:\n",
    "repobench-p": "Please complete the code given below. \n{context}{input}Next line of code:\n",
}
WITHOUT_INPUT = ("gov_report", "lcc", "multi_news", "passage_count", "vcsum")
ALL_LABELS = ("trec", "lsht")


def load(dataset: str, rows: list[dict]) -> list[dict]:
    """The loader of this dataset: what it keeps of each data row."""
    loaded = []
    for row in rows:
        kept = {"context": row["context"]} if dataset in WITHOUT_INPUT else {"input": row["input"],
                                                                              "context": row["context"]}
        if dataset in ALL_LABELS:
            kept["all_labels"] = {"answers": row["answers"], "all_classes": row["all_classes"]}
        else:
            kept["answers"] = row["answers"]
        loaded.append(kept)
    return loaded


def opencompass_rows(dataset: str, loaded: list[dict], predictions: list[str], *,
                     as_messages: bool = False) -> list[dict]:
    """The rows save_results writes: origin_prompt (a string, or an API model's HUMAN message), prediction, and
    the gold (the output column) when it is not empty. str.format leaves no `{input}` where the loader kept none:
    those templates name none."""
    rows = []
    for item, prediction in zip(loaded, predictions, strict=True):
        prompt = PROMPTS[dataset].format(**item)
        row = {"origin_prompt": [{"role": "HUMAN", "prompt": prompt}] if as_messages else prompt,
               "prediction": prediction}
        gold = item.get("all_labels", item.get("answers"))
        if gold:
            row["gold"] = gold
        rows.append(row)
    return rows


def write_both(root: Path, *, native_model: str, opencompass_model: str, seed: int,
               split: dict[str, int] | None = None) -> tuple[Path, Path, int]:
    """One model's answers to all 21 datasets, written twice: pred.py's `<root>/pred/<native_model>/` and an
    OpenCompass work dir `<root>/outputs/` (datasets in `split` cut into parts, every other dataset's prompts as
    API messages). Returns both paths and the number of rows."""
    native, outputs, total = root / "pred" / native_model, root / "outputs", 0
    for n, dataset in enumerate(DATASETS):
        answers = model_rows(dataset, seed=seed)
        data = full_data_rows(dataset)
        write_rows(native / f"{dataset}.jsonl", answers)
        written = opencompass_rows(dataset, load(dataset, data), [row["pred"] for row in answers],
                                   as_messages=n % 2 == 1)
        write_dataset(outputs, opencompass_model, f"LongBench_{dataset}", written,
                      parts=(split or {}).get(dataset, 1))
        total += len(answers)
    return native, outputs, total
