"""OpenCompass's LV-Eval output as OpenCompass writes it, made at test time by restating its own code on
LV-Eval-shaped rows; and LV-Eval's own prediction file of the same predictions, for comparison.

Restated (not copied) from open-compass/opencompass at a5acc4bba3b658f151617a3b393602110fb7a740:

- ``opencompass/datasets/lveval/lveval_<dataset>.py``, ``LVEval<...>Dataset.load``: one loaded row per row of
  the data, in order, with ``input``, ``context`` and ``answers``; the loaders of hotpotwikiqa, lic, loogle_CR,
  loogle_MIR, loogle_SD, multifieldqa_en and multifieldqa_zh set ``answers`` to ``answers + [answer_keywords]``
  (and keep ``answer_keywords``); cmrc's keeps ``confusing_facts`` but not the keywords; dureader's keeps neither;
- ``opencompass/configs/datasets/lveval/lveval<dataset>/lveval_<dataset>_gen_<hash>.py``: ``abbr`` is
  ``'LVEval_' + f'{dataset}_{level}'``, ``output_column='answers'``, and one HUMAN round whose prompt is the
  template below (the same text as LV-Eval's own ``config.DATASET_PROMPT``);
- ``opencompass/openicl/icl_inferencer/icl_gen_inferencer.py`` (``gold_ans = dataset['test'][output_column]``)
  and ``icl_base_inferencer.py``, ``GenInferencerOutputHandler.save_results``: each row is
  ``{"origin_prompt", "prediction"}`` under its index, plus ``"gold"`` when the gold is truthy.

LV-Eval's own file is restated from infinigence/LVEval at 63e7ae939bd347c76b2cdb1cebfb216faca26897,
``prediction.py`` ``get_pred``: ``{"pred", "answers", "gold_ans": answer_keywords or None, "input",
"all_classes", "length"}``.
"""
from __future__ import annotations

import json
from pathlib import Path

from app.core.metrics.files import lveval_dataset
from tests.support.lveval_data import DATASETS, LEVEL_WORDS, model_rows, questions, write_rows
from tests.support.opencompass import write_dataset

_EN_ONE = ("Please answer the following question based on the given passages. Questions and answers are only relevant "
           "to one passage. Only give me the answer and do not output any other explanation and evidence.\n\n"
           "Article: {context}\n\nPlease answer the following question based on the above passages. Questions and "
           "answers are only relevant to one passage. Only give me the answer and do not output any other explanation "
           "and evidence.\n\nQuestion: {input}\nAnswer:")
_ZH_MIXUP = ("请根据下面给定的文章回答问题，问题和答案只与其中一篇文章有关。\n\n文章：{context}\n\n{now}基于上述文章回答下面的问题，"
             "问题和答案只与其中一篇文章有关。\n\n问题：{input}\n回答：")
PROMPTS = {
    "hotpotwikiqa_mixup": _EN_ONE.replace("Please answer the following question based on the given passages",
                                          "Answer the question based on the given passages")
                                 .replace("relevant to one passage", "relevant to some passages"),
    "loogle_SD_mixup": _EN_ONE, "loogle_CR_mixup": _EN_ONE, "loogle_MIR_mixup": _EN_ONE,
    "multifieldqa_en_mixup": _EN_ONE,
    "multifieldqa_zh_mixup": ("请阅读以下文章并用中文回答问题，问题和答案只与其中一篇文章有关。只需要直接给出问题的答案，不要输出其他任何解释和证据。"
                              "\n\n文章：{context}\n\n请基于上面的文章回答下面的问题，问题和答案只与其中一篇文章有关。只需要直接给出问题的"
                              "答案，不要输出其他任何解释和证据。\n\n问题：{input}\n回答："),
    "factrecall_en": ("Please answer the following questions based on the given article.\n\nArticle: {context}\n\n"
                      "Please answer the following questions based on the above article.\n\nQuestion: {input}\n"
                      "Answer:"),
    "factrecall_zh": "请基于给定的文章回答下述问题。\n\n文章：{context}\n\n现在请基于上述文章回答下面的问题。\n\n问题：{input}\n回答：",
    "cmrc_mixup": _ZH_MIXUP.replace("{now}", "现在请"),
    "lic_mixup": _ZH_MIXUP.replace("{now}", "请现在"),
    "dureader_mixup": _ZH_MIXUP.replace("{now}", "现在请"),
}
# What each loader keeps of a data row ('answers' with the keywords appended where marked).
KEYWORDS_APPENDED = ("hotpotwikiqa_mixup", "lic_mixup", "loogle_CR_mixup", "loogle_MIR_mixup", "loogle_SD_mixup",
                     "multifieldqa_en_mixup", "multifieldqa_zh_mixup")
_KEPT = {
    **dict.fromkeys(("cmrc_mixup", "factrecall_en", "factrecall_zh"), ("input", "context", "answers",
                                                                        "confusing_facts")),
    "dureader_mixup": ("input", "context", "answers"),
    **dict.fromkeys(("hotpotwikiqa_mixup", "lic_mixup", "multifieldqa_en_mixup", "multifieldqa_zh_mixup"),
                    ("input", "context", "answers", "confusing_facts", "answer_keywords")),
    **dict.fromkeys(("loogle_CR_mixup", "loogle_MIR_mixup", "loogle_SD_mixup"),
                    ("input", "context", "answers", "answer_keywords")),
}


def data_rows(dataset: str, level: str, count: int) -> list[dict]:
    """Rows as LV-Eval's data holds them (Infinigence/LVEval): every dataset's rows carry `answer_keywords` (null
    where a question has none), cmrc's included, and `confusing_facts`; the questions are lveval_data's."""
    language = DATASETS[dataset][0]
    rows = []
    for i, question in enumerate(questions(dataset, count)):
        fact = f"{question.decoy}。" if language == "zh" else f"{question.decoy}."
        rows.append({"input": question.input, "context": f"(passage {i} of the {level} context) {fact}",
                     "answers": list(question.answers), "length": LEVEL_WORDS[level], "dataset": dataset,
                     "language": language, "answer_keywords": question.gold_ans, "confusing_facts": [fact]})
    return rows


def load(dataset: str, rows: list[dict]) -> list[dict]:
    """The loader of this dataset: what it keeps of each row, 'answers' with the keywords appended where it does."""
    loaded = []
    for row in rows:
        kept = {key: row[key] for key in _KEPT[dataset]}
        if dataset in KEYWORDS_APPENDED:
            kept["answers"] = row["answers"] + [row["answer_keywords"]]
        loaded.append(kept)
    return loaded


def opencompass_rows(dataset: str, loaded: list[dict], predictions: list[str], *,
                     as_messages: bool = False) -> list[dict]:
    """The rows save_results writes for these predictions: origin_prompt (a string, or an API model's HUMAN
    message), prediction, and the gold (the 'answers' column) when it is not empty."""
    rows = []
    for item, prediction in zip(loaded, predictions, strict=True):
        prompt = PROMPTS[dataset].format(context=item["context"], input=item["input"])
        row = {"origin_prompt": [{"role": "HUMAN", "prompt": prompt}] if as_messages else prompt,
               "prediction": prediction}
        if item["answers"]:
            row["gold"] = item["answers"]
        rows.append(row)
    return rows


def native_rows(rows: list[dict], predictions: list[str]) -> list[dict]:
    """LV-Eval's prediction.py output for these predictions (get_pred)."""
    return [{"pred": prediction, "answers": row["answers"],
             "gold_ans": row["answer_keywords"] if "answer_keywords" in row else None, "input": row["input"],
             "all_classes": row.get("all_classes"), "length": row["length"]}
            for row, prediction in zip(rows, predictions, strict=True)]


def predictions(dataset: str, level: str, count: int, seed: int) -> list[str]:
    """A model's answers to the first `count` questions (lveval_data's seeded model, adversarial rows included)."""
    return [row["pred"] for row in model_rows(dataset, level, count=count, seed=seed)]


def write_both(root: Path, *, native_model: str, opencompass_model: str, seed: int, levels: tuple[str, ...],
               count: int, split: dict[str, int] | None = None) -> tuple[Path, Path, int]:
    """One model's answers to every dataset at `levels`, written twice: LV-Eval's folder `<root>/lveval/
    <native_model>/` and an OpenCompass work dir `<root>/outputs/` (datasets in `split` cut into that many parts,
    every other dataset's prompts as API messages). Returns both paths and the number of rows."""
    native, outputs, total = root / "lveval" / native_model, root / "outputs", 0
    for n, dataset in enumerate(DATASETS):
        for level in levels:
            rows, answers = data_rows(dataset, level, count), predictions(dataset, level, count, seed)
            write_rows(native / f"{dataset}_{level}.jsonl", native_rows(rows, answers))
            written = opencompass_rows(dataset, load(dataset, rows), answers, as_messages=n % 2 == 1)
            write_dataset(outputs, opencompass_model, f"LVEval_{dataset}_{level}", written,
                          parts=(split or {}).get(dataset, 1))
            total += len(rows)
    return native, outputs, total


def rows_from_lveval(pred_file: Path) -> list[dict]:
    """OpenCompass rows for the answers of an LV-Eval prediction file (`<dataset>_<level>.jsonl`): its rows taken
    back to the data's (`gold_ans` is the data's answer_keywords), then through the loader and save_results."""
    dataset = lveval_dataset(pred_file.stem)
    items = [json.loads(line) for line in pred_file.read_text(encoding="utf-8").splitlines()]
    rows = [{"input": item["input"], "context": "(the long context)", "answers": item["answers"],
             "answer_keywords": item.get("gold_ans"), "confusing_facts": []} for item in items]
    return opencompass_rows(dataset, load(dataset, rows), [item["pred"] for item in items])
