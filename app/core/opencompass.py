"""OpenCompass prediction files: names, layout and rows, as open-compass/opencompass writes them (pure).

OpenCompass writes one JSON object per model and dataset to `<work_dir>/predictions/<model_abbr>/
<dataset_abbr>.json` (`get_infer_output_path`); a dataset its partitioner split is written as
`<dataset_abbr>_0.json`, `<dataset_abbr>_1.json`, … (`SizePartitioner.split_dataset`), read back in that
order (`OpenICLEvalTask._load_predictions`). The object's keys are the row indexes "0", "1", … within the
file; each value holds `origin_prompt` (a string, or for API models a list of `{"role", "prompt"}`
messages), `prediction` and, when the answer is not empty, `gold` (`GenInferencerOutputHandler.
save_results`). Rows follow the dataset loaders' order: L-Eval's loaders flatten each document's
`instructions`/`outputs` in file order; LV-Eval's and LongBench's keep one row per line of their data.
The gold is the dataset's `output_column`: a string (L-Eval), a list (LV-Eval's and LongBench's `answers`) or
an object (LongBench's trec and lsht: `all_labels`, `{"answers", "all_classes"}`).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from app.core.benchmarks.registry import BENCHMARKS, opencompass_datasets, opencompass_prefixes

# The L-Eval loaders pass each answer on as it is, except quality's: LEvalQualityDataset keeps `answer[1]`, the
# option letter of "(B) Their subconscious …", as the row's gold.
_GOLD_OF_ANSWER = {"quality": lambda answer: answer[1:2]}
# Every LV-Eval config reads `answers` as the row's gold (reader_cfg output_column). The loaders of these seven
# datasets put `answers + [answer_keywords]` there (opencompass/datasets/lveval/lveval_<dataset>.py): their gold is
# LV-Eval's answers with the answer keywords (LV-Eval's `gold_ans`) as its last item. The other four pass `answers`
# on as they are (cmrc_mixup's loader drops its keywords; dureader and factrecall have none).
LVEVAL_KEYWORDS_IN_GOLD = frozenset({
    "hotpotwikiqa_mixup", "lic_mixup", "loogle_CR_mixup", "loogle_MIR_mixup", "loogle_SD_mixup",
    "multifieldqa_en_mixup", "multifieldqa_zh_mixup",
})
# Every benchmark's dataset abbrs (app.core.benchmarks): abbr -> (benchmark key, task).
DATASETS = opencompass_datasets()
LEVAL_DATASETS = {abbr: task for abbr, (key, task) in DATASETS.items() if key == "leval"}
PREFIXES = tuple(opencompass_prefixes())
# The benchmarks whose OpenCompass datasets are read, as messages name them: "L-Eval, LV-Eval or LongBench".
_LABELS = [b.label for b in BENCHMARKS if b.opencompass_datasets]
LABELS = ", ".join(_LABELS[:-1]) + f" or {_LABELS[-1]}" if len(_LABELS) > 1 else "".join(_LABELS)
KEY_SHOWN = 40  # characters of an unexpected key shown in its error
_PART_RE = re.compile(r"^(?P<abbr>.+)_(?P<part>\d+)$")


@dataclass(frozen=True)
class OcName:
    """What a file's path says: model (its folder), dataset abbr, and the part of a split dataset (or None)."""

    model: str
    abbr: str
    part: int | None
    benchmark: str  # its benchmark's key ("leval", "lveval", …), or "" for an unknown dataset of one
    task: str  # the L-Eval task, or `<dataset>_<level>` for LV-Eval (the benchmark's own task name)

    @property
    def dataset_key(self) -> tuple[str, str]:
        return self.model, self.abbr


def leval_gold(task: str, answer: str) -> str:
    """The `gold` OpenCompass writes for an L-Eval answer of this task."""
    convert = _GOLD_OF_ANSWER.get(task)
    return convert(answer) if convert else answer


@dataclass(frozen=True)
class LvevalGold:
    """What an LV-Eval row's gold says, as LV-Eval's own files hold it: `answers`, and the keywords (`gold_ans`)
    when the loader wrote them into the gold (`has_keywords`); else the question's keywords apply."""

    answers: tuple[list | str, ...]  # the answers it may stand for ([] and "" when OpenCompass left gold out)
    keywords: str | None = None
    has_keywords: bool = False


def lveval_gold(dataset: str, gold: str | list | None) -> LvevalGold:
    """Read a row's gold by the shape OpenCompass's loader of this LV-Eval dataset gives it; ValueError says why not.

    save_results writes `gold` only when it is not empty, so a missing gold is empty answers (LV-Eval writes `[]`,
    a file may hold `""`); a loader that appends the keywords always writes a list of at least that one item.
    """
    if dataset not in LVEVAL_KEYWORDS_IN_GOLD:
        return LvevalGold(([], "") if not gold else (gold,))
    if not isinstance(gold, list) or not gold:
        shown = "missing" if gold is None else "empty" if not gold else "a string"
        raise ValueError(f"is {shown}: OpenCompass's loader of {dataset} writes answers + [answer_keywords], a "
                         "list whose last item is the keywords")
    keywords = gold[-1]
    if keywords is not None and not isinstance(keywords, str):
        raise ValueError(f"ends with {type(keywords).__name__} {str(keywords)[:KEY_SHOWN]!r}: OpenCompass's loader of "
                         f"{dataset} writes answers + [answer_keywords], so its last item is the keywords (text)")
    return LvevalGold((gold[:-1],), keywords, True)


def is_opencompass_file(path: str | PurePosixPath) -> bool:
    """A `.json` named after a dataset of a benchmark OpenCompass runs (known or not) inside a model folder."""
    parts = PurePosixPath(str(path)).parts
    return len(parts) >= 2 and parts[-1].endswith(".json") and parts[-1].startswith(PREFIXES)


def split_abbr(stem: str) -> tuple[str, int | None]:
    """("LEval_tpo", None) for LEval_tpo; ("LEval_tpo", 1) for LEval_tpo_1; an unknown stem as it is."""
    if stem in DATASETS:
        return stem, None
    match = _PART_RE.match(stem)
    if match and match["abbr"] in DATASETS:
        return match["abbr"], int(match["part"])
    return stem, None


def describe_path(path: str | PurePosixPath) -> OcName:
    pure = PurePosixPath(str(path))
    abbr, part = split_abbr(pure.name.removesuffix(".json"))
    if abbr in DATASETS:
        benchmark, task = DATASETS[abbr]
        return OcName(pure.parent.name, abbr, part, benchmark, task)
    return OcName(pure.parent.name, abbr, part, "", "")


def part_problems(names: list[OcName]) -> dict[OcName, str]:
    """Why a file of one model's dataset cannot stand with the others (whole and split, a missing part)."""
    problems: dict[OcName, str] = {}
    groups: dict[tuple[str, str], list[OcName]] = {}
    for name in names:
        groups.setdefault(name.dataset_key, []).append(name)
    for (_, abbr), group in groups.items():
        whole = [n for n in group if n.part is None]
        parts = sorted(n.part for n in group if n.part is not None)
        if len(whole) > 1 or len(set(parts)) < len(parts):
            for name in group:
                problems[name] = (f"{abbr} of model {name.model} appears more than once in this upload (two output "
                                  "folders?): keep one run's predictions")
        elif whole and parts:
            for name in group:
                problems[name] = (f"both {abbr}.json and its parts {abbr}_N.json are present; OpenCompass reads "
                                  f"{abbr}.json alone: keep one or the other")
        elif parts and parts != list(range(len(parts))):
            missing = sorted(set(range(max(parts) + 1)) - set(parts))
            for name in group:
                problems[name] = (f"{abbr} is split into parts, but part(s) "
                                  f"{', '.join(f'{abbr}_{m}.json' for m in missing)} are missing")
    return problems


@dataclass
class OcRow:
    key: str  # the row's key in its file: "0", "1", …
    index: int  # its position in the whole dataset (parts before it counted)
    prompt: str  # origin_prompt's text, messages joined
    prediction: str
    gold: str | list | dict | None


@dataclass
class OcProblem:
    key: str | None
    field: str | None
    message: str

    @property
    def where(self) -> str | None:
        """The field to show beside the file: `"<key>".<field>`, `"<key>"`, or the field alone."""
        if self.key is None:
            return self.field
        return f'"{self.key}"' + (f".{self.field}" if self.field else "")


@dataclass
class OcFile:
    rows: list[OcRow] = field(default_factory=list)
    problems: list[OcProblem] = field(default_factory=list)
    size: int = 0  # the entries of the file's object, good or bad


def prompt_text(origin_prompt: Any) -> str | None:
    """The text of origin_prompt: a string as it is, messages (`prompt` or `content`) joined by newlines."""
    if isinstance(origin_prompt, str):
        return origin_prompt
    if isinstance(origin_prompt, list):
        texts = []
        for message in origin_prompt:
            text = message.get("prompt", message.get("content")) if isinstance(message, dict) else None
            if not isinstance(text, str):
                return None
            texts.append(text)
        return "\n".join(texts)
    return None


def parse_rows(data: Any, *, offset: int = 0) -> OcFile:
    """Validate a predictions object ({"0": {origin_prompt, prediction, gold?}, …}); every problem by key."""
    result = OcFile()
    if not isinstance(data, dict):
        result.problems.append(OcProblem(None, None, "not an OpenCompass predictions file: the JSON is not an object "
                                                     'keyed "0", "1", …'))
        return result
    result.size = len(data)
    if not data:
        result.problems.append(OcProblem(None, None, "the file holds no rows"))
    # OpenICLEvalTask._load_predictions reads `preds[str(i)] for i in range(len(preds))`: a file of n rows must
    # hold "0" to "n-1". A key it lacks is named as missing; a key it never reads, as unexpected.
    expected = f'"0" to "{len(data) - 1}"'
    for i in range(len(data)):
        key = str(i)
        if key not in data:
            result.problems.append(OcProblem(key, None, f"missing: the file holds {len(data)} rows, so OpenCompass "
                                                        f"reads the keys {expected}, and this one is not there"))
            continue
        row = _parse_row(key, data[key], offset + i, result.problems)
        if row is not None:
            result.rows.append(row)
    read = {str(i) for i in range(len(data))}
    for key in data:
        if key not in read:
            shown = key[:KEY_SHOWN] + ("…" if len(key) > KEY_SHOWN else "")
            result.problems.append(OcProblem(shown, None, f"unexpected key: OpenCompass numbers a file's rows "
                                                          f"{expected} and reads only those"))
    return result


def _parse_row(key: str, item: Any, index: int, problems: list[OcProblem]) -> OcRow | None:
    if not isinstance(item, dict):
        problems.append(OcProblem(key, None, "a row must be an object with origin_prompt, prediction and gold"))
        return None
    ok = True
    if "origin_prompt" not in item:
        problems.append(OcProblem(key, "origin_prompt", "missing"))
        ok = False
    prompt = prompt_text(item.get("origin_prompt"))
    if "origin_prompt" in item and prompt is None:
        problems.append(OcProblem(key, "origin_prompt", "must be a string or a list of messages with 'prompt' text"))
        ok = False
    prediction = item.get("prediction")
    if not isinstance(prediction, str):
        problems.append(OcProblem(key, "prediction", "missing" if "prediction" not in item else
                                  "must be a string (one answer per question; num_return_sequences 1)"))
        ok = False
    gold = item.get("gold")
    if gold is not None and not isinstance(gold, (str, list, dict)):  # each benchmark reads its own shapes
        problems.append(OcProblem(key, "gold", "must be a string, a list or an object"))
        ok = False
    if not ok:
        return None
    return OcRow(key=key, index=index, prompt=prompt, prediction=prediction, gold=gold)
