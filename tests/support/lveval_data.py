"""Write synthetic LV-Eval model folders: every dataset, both languages, every level, adversarial rows.

A folder is what LV-Eval's ``prediction.py`` writes for one model:
``<root>/<model>/<dataset>_<level>.jsonl``, one row per question with
``pred``, ``answers`` (a list), ``gold_ans``, ``input``, ``all_classes`` and
``length``.  Questions are shared across levels and models, as in LV-Eval,
and every question is fictional.

Three kinds of folder:

* :func:`write_model` – valid for LV-Eval's ``evaluation.py`` (it runs on it
  without crashing), seeded, with adversarial rows in every file;
* :func:`write_quirk_folder` – files LV-Eval accepts but a naive reader gets
  wrong (a string ``answers``, U+2028 inside a string, CRLF, missing levels,
  stray files);
* :func:`write_bad_folder` – files LV-Eval rejects or crashes on, with the
  file, line and field an importer must name.
"""
from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

# dataset -> (language, has answer keywords), from LV-Eval's config.py and README.
DATASETS: dict[str, tuple[str, bool]] = {
    "hotpotwikiqa_mixup": ("en", True),
    "loogle_SD_mixup": ("en", True),
    "loogle_CR_mixup": ("en", True),
    "loogle_MIR_mixup": ("en", True),
    "multifieldqa_en_mixup": ("en", True),
    "multifieldqa_zh_mixup": ("zh", True),
    "factrecall_en": ("en", False),
    "factrecall_zh": ("zh", False),
    "cmrc_mixup": ("zh", False),
    "lic_mixup": ("zh", True),
    "dureader_mixup": ("zh", False),
}
LEVELS = ("16k", "32k", "64k", "128k", "256k")
LEVEL_WORDS = {"16k": 16_000, "32k": 32_000, "64k": 64_000, "128k": 128_000, "256k": 256_000}
FACTRECALL = ("factrecall_en", "factrecall_zh")


@dataclass(frozen=True)
class Question:
    input: str
    answers: tuple[str, ...]
    gold_ans: str | None
    decoy: str  # a confusing fact's answer
    omit_gold: bool = False  # write the row without a gold_ans key at all
    probes: tuple[str, ...] = ()  # predictions that test this question's rule; models take turns


@dataclass(frozen=True)
class BadCase:
    """One problem an importer must report: the file, the 1-based line (None: the whole file) and the field.

    ``upstream`` is what LV-Eval's evaluation.py does with the file: the exception it
    dies with, or "scored" when it accepts the file.
    """
    file: str
    line: int | None
    field: str | None
    problem: str
    upstream: str


# --- invented names ----------------------------------------------------------------

_EN_FIRST = ("Orrin", "Maelis", "Tobiah", "Sefa", "Idris", "Wenna", "Caspar", "Liora", "Bram", "Ysolde")
_EN_LAST = ("Vale", "Fenwold", "Ashgrove", "Quillon", "Marrow", "Thistlebank", "Corvane", "Halloway")
_EN_PLACES = ("Velmora", "Lumeria", "Brackenreach", "Saltmere", "Orlen Falls", "Kestrel Bay", "Dunhollow")
_EN_THINGS = ("lighthouse", "clock tower", "seed vault", "river ferry", "observatory", "glass market")
_ZH_SURNAMES = ("林", "周", "沈", "顾", "陆", "苏", "温", "叶")
_ZH_GIVEN = ("远舟", "书雁", "知秋", "若溪", "云帆", "听澜", "明川", "晚晴")
_ZH_PLACES = ("青石镇", "云岭村", "白沙湾", "星海城", "落霞渡", "松风岭", "临川港")
_ZH_THINGS = ("灯塔", "钟楼", "种子库", "渡船", "观星台", "琉璃市集")


def _en_name(rng: random.Random) -> str:
    return f"{rng.choice(_EN_FIRST)} {rng.choice(_EN_LAST)}"


def _zh_name(rng: random.Random) -> str:
    return rng.choice(_ZH_SURNAMES) + rng.choice(_ZH_GIVEN)


# --- questions ----------------------------------------------------------------------

# The first questions of every non-factrecall dataset stress the answer side; each
# carries the predictions ("probes") that hit its rule.
_EN_SPECIAL = (
    # several answers: LV-Eval scores the first only, so naming the second scores 0
    Question("Which two wardens kept the Velmora seed vault?", ("Maelis Quillon", "Tobiah Marrow", "the wardens"),
             "Maelis Quillon", "Sefa Corvane", probes=("Tobiah Marrow", "Maelis Quillon")),
    # empty keywords: English skips the gate
    Question("Who rang the Saltmere clock tower bell in 1871?", ("Caspar Vale rang it",), "", "Bram Halloway",
             probes=("Caspar Vale",)),
    # no gold_ans key at all
    Question("What did the Orlen Falls council build first?", ("A river ferry",), None, "A glass market",
             omit_gold=True, probes=("a river ferry", "The ferry.")),
    # keywords that are all blacklisted: nothing can be recalled, always 0
    Question("Who was it that he met at Kestrel Bay?", ("He was with her",), "he was with her", "Idris Ashgrove",
             probes=("he was with her",)),
    # an answer that normalises to nothing, without keywords: F1 0, no crash in English
    Question("What mark did the ferryman carve?", ("!!!",), None, "A star", probes=("!!!", "a star")),
    # an empty answer list: LV-Eval's loop never runs and the row scores 0
    Question("Who planted the Dunhollow orchard?", (), "Wenna Thistlebank", "Liora Fenwold",
             probes=("Wenna Thistlebank",)),
    # five keywords: one recalled is recall 0.2, exactly the English threshold (passes)
    Question("Who mapped the Brackenreach coast?", ("Ysolde Corvane mapped the coast with Bram",),
             "Ysolde Corvane Bram Halloway Saltmere", "Orrin Marrow", probes=("Bram", "Bram of the coast")),
)
_ZH_SPECIAL = (
    Question("守护青石镇种子库的两位守卫是谁？", ("林远舟和周书雁", "沈知秋"), "林远舟", "顾若溪",
             probes=("沈知秋", "林远舟")),
    # empty keywords: Chinese gates on the answer instead
    Question("1871年敲响白沙湾钟楼的是谁？", ("陆云帆敲响了钟楼",), "", "苏听澜", probes=("陆云帆", "陆云帆敲响钟楼")),
    Question("云岭村最先修建了什么？", ("一艘渡船",), None, "琉璃市集", omit_gold=True, probes=("渡船", "一艘渡船")),
    # keywords made of blacklisted words only (的, 和, 是): recall 0
    Question("他们在落霞渡做了什么？", ("的和是",), "的和是", "观星", probes=("的和是",)),
    # "C" lowercases to the blacklisted "c": only 级 can be recalled (1 of 2)
    Question("松风岭的灯塔是哪一级？", ("C级灯塔",), "C级", "B级", probes=("c级", "C")),
    Question("谁种下了临川港的果园？", (), "温明川", "叶晚晴", probes=("温明川",)),
    # five keyword tokens: two recalled is recall 0.4, exactly the Chinese threshold (passes); one fails
    Question("哪些城市参加了灯塔节？", ("北京和上海",), "北京 上海 广州 深圳 天津", "南京",
             probes=("北京 上海", "北京")),
)
_FACTRECALL = {
    "factrecall_en": Question("Who is remembered as the founder of the floating city of Lumeria?",
                              ("Orrin Vale",), None, "Garrick Stone"),
    "factrecall_zh": Question("被世人称为星海城创建者的人叫什么名字？", ("林远舟",), None, "陈知秋"),
}


def _plain_question(dataset: str, index: int, language: str, keyworded: bool) -> Question:
    rng = random.Random(f"{dataset}/{index}")
    year = rng.randint(1650, 1990)
    if language == "en":
        person, decoy, place, thing = _en_name(rng), _en_name(rng), rng.choice(_EN_PLACES), rng.choice(_EN_THINGS)
        if index % 2:
            return Question(f"In which year was the {place} {thing} restored?",
                            (f"The {thing} was restored in {year} by {person}.",),
                            str(year) if keyworded else None, str(year + rng.randint(1, 30)))
        return Question(f"Who restored the {thing} of {place}?", (f"{person}, the {thing} keeper",),
                        person if keyworded else None, decoy)
    person, decoy, place, thing = _zh_name(rng), _zh_name(rng), rng.choice(_ZH_PLACES), rng.choice(_ZH_THINGS)
    if index % 2:
        return Question(f"{place}的{thing}是哪一年修复的？", (f"{place}的{thing}在{year}年由{person}修复。",),
                        f"{year}年" if keyworded else None, f"{year + rng.randint(1, 30)}年")
    return Question(f"谁修复了{place}的{thing}？", (f"{person}修复了{thing}",), person if keyworded else None, decoy)


def _dureader_question(index: int) -> Question:
    rng = random.Random(f"dureader_mixup/{index}")
    place, thing, person = rng.choice(_ZH_PLACES), rng.choice(_ZH_THINGS), _zh_name(rng)
    answer = (f"{place}的{thing}始建于{rng.randint(1700, 1950)}年，由{person}主持修建。"
              f"它先后经历了{rng.randint(2, 6)}次翻修，如今仍对外开放，每天接待游客约{rng.randint(100, 900)}人。")
    return Question(f"{place}的{thing}有什么历史？", (answer,), None, f"{thing}是近年新建的")


_DUREADER_SPECIAL = (
    # punctuation on both sides: LV-Eval's ROUGE-L scores this pair 0.999999995 (see the oracle)
    Question("渡口的告示上写了什么符号？", ("。。！！",), None, "星号", probes=("！？！", "星号")),
    # blacklisted words only: the reference is empty, so the row scores 0
    Question("守林人说了什么？", ("的的的",), None, "没有", probes=("的的的", "没有")),
)


def _special_count(dataset: str) -> int:
    if dataset in _FACTRECALL:
        return 0
    if dataset == "dureader_mixup":
        return len(_DUREADER_SPECIAL)
    return len(_EN_SPECIAL if DATASETS[dataset][0] == "en" else _ZH_SPECIAL)


def questions(dataset: str, count: int) -> list[Question]:
    """The dataset's first ``count`` questions, the same at every level and for every model."""
    if dataset in _FACTRECALL:
        return [_FACTRECALL[dataset]] * count
    language, keyworded = DATASETS[dataset]
    if dataset == "dureader_mixup":
        special = list(_DUREADER_SPECIAL)
        plain = [_dureader_question(i) for i in range(count)]
    else:
        special = list(_EN_SPECIAL if language == "en" else _ZH_SPECIAL)
        plain = [_plain_question(dataset, i, language, keyworded) for i in range(count)]
    return (special + plain)[:count]


# --- predictions ----------------------------------------------------------------------

_EN_ADVERSARIAL = (
    "",  # empty
    "the and of to in",  # blacklist (and article) words only
    "?!... ,;:",  # punctuation only
    "答案是 Orrin Vale 先生",  # mixed scripts
    "ORRIN VALE!!!",  # shouting, punctuation glued on
    "Line one\u2028line two\x85and three",  # separators a naive splitlines() breaks on
    "Ｏｒｒｉｎ　Ｖａｌｅ",  # full-width letters and an ideographic space
)
_ZH_ADVERSARIAL = (
    "",
    "的和是了在",
    "。！？，、；",
    "The answer is 林远舟 (Lin Yuanzhou)",
    "答案：C",
    "林远舟\u2028周书雁",
    "１８７１年",  # full-width digits
)


def _prediction(question: Question, language: str, rng: random.Random, p_right: float) -> str:
    answer = question.answers[0] if question.answers else ""
    keywords = question.gold_ans or answer
    roll = rng.random()
    if roll < p_right:
        forms = (answer, keywords, f"The answer is {answer}" if language == "en" else f"答案是{answer}")
        return rng.choice(forms)
    if roll < p_right + 0.15:  # partial
        if language == "en":
            words = answer.split()
            return " ".join(words[: max(1, len(words) // 2)])
        return answer[: max(1, len(answer) // 2)]
    if roll < p_right + 0.35:
        return question.decoy  # misled by a confusing fact
    if language == "en":
        return rng.choice(("I cannot find this in the passage.", "It is not mentioned.", "Unknown"))
    return rng.choice(("文章中没有提到。", "无法确定", "不知道"))


def _p_right(skill: float, level: str, window: int | None) -> float:
    """Chance of a right answer: falls with length, and sharply past the model's window (in tokens)."""
    p = skill * (0.85 ** LEVELS.index(level))
    if window is not None and LEVEL_WORDS[level] > window:
        p *= window / LEVEL_WORDS[level]
    return max(0.0, min(1.0, p))


def model_rows(dataset: str, level: str, *, count: int = 16, seed: int = 0, skill: float = 0.7,
               window: int | None = None, adversarial: bool = True, depth_field: str | None = None) -> list[dict]:
    """The rows of one ``<dataset>_<level>.jsonl`` for one model."""
    language = DATASETS[dataset][0]
    rng = random.Random(f"{seed}/{dataset}/{level}")
    bad_preds = _EN_ADVERSARIAL if language == "en" else _ZH_ADVERSARIAL
    rows = []
    for index, question in enumerate(questions(dataset, count)):
        probe = index - _special_count(dataset)
        if adversarial and question.probes:
            pred = question.probes[(seed + LEVELS.index(level)) % len(question.probes)]
        elif adversarial and 0 <= probe < len(bad_preds):
            pred = bad_preds[(probe + seed) % len(bad_preds)]
        else:
            p_right = _p_right(skill, level, window)
            if depth_field and dataset in FACTRECALL:
                # Lost in the middle: needles mid-context are found less often, more so at longer levels.
                depth = index / max(1, count - 1)
                p_right *= 1 - (0.15 + 0.15 * LEVELS.index(level)) * 4 * depth * (1 - depth)
            pred = _prediction(question, language, rng, p_right)
        row: dict = {"pred": pred, "answers": list(question.answers)}
        if not question.omit_gold:
            row["gold_ans"] = question.gold_ans
        words = LEVEL_WORDS[level]
        row.update({"input": question.input, "all_classes": None,
                    "length": rng.randint(int(words * 0.8), int(words * 1.2))})
        if depth_field and dataset in FACTRECALL:
            row[depth_field] = round(index / max(1, count - 1), 4)  # evenly spaced, as LV-Eval places its needles
        rows.append(row)
    return rows


def write_rows(path: Path, rows: Iterable[dict], *, newline: str = "\n") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + newline)
    return path


def write_model(root: Path, model: str, *, seed: int = 0, rows: int = 16, skill: float = 0.7,
                window: int | None = None, datasets: Iterable[str] = tuple(DATASETS),
                levels: Iterable[str] = LEVELS, adversarial: bool = True, depth_field: str | None = None,
                long_answer: bool = False) -> Path:
    """Write one model folder that LV-Eval's evaluation.py scores without crashing; return it.

    ``long_answer`` adds a dureader row whose answer is long enough for the
    rouge package's recursive LCS to overflow the stack (LV-Eval scores it 0).
    """
    folder = Path(root) / model
    levels = tuple(levels)
    for dataset in datasets:
        for level in levels:
            data = model_rows(dataset, level, count=rows, seed=seed, skill=skill, window=window,
                              adversarial=adversarial, depth_field=depth_field)
            if long_answer and dataset == "dureader_mixup":
                words = " ".join(f"词{i}" for i in range(1200))
                data.append({"pred": "词0 词1", "answers": [words], "gold_ans": None,
                             "input": "守林人的日记写了什么？", "all_classes": None, "length": LEVEL_WORDS[level]})
            write_rows(folder / f"{dataset}_{level}.jsonl", data)
    return folder


# --- layouts LV-Eval accepts but a naive reader gets wrong ------------------------


def write_quirk_folder(root: Path, model: str = "quirky-model") -> Path:
    """Files evaluation.py reads without error, each testing one reading rule; return the folder."""
    folder = Path(root) / model
    base = {"gold_ans": None, "input": "Who founded Lumeria?", "all_classes": None, "length": 15000}
    # A string `answers` is iterated: only its first character, "O", is the reference.
    write_rows(folder / "factrecall_en_16k.jsonl", [
        {**base, "pred": "O", "answers": "Orrin Vale"},
        {**base, "pred": "Orrin Vale", "answers": "Orrin Vale"},
    ])
    # U+2028 and U+0085 inside a JSON string are not line breaks for Python's file iteration.
    write_rows(folder / "factrecall_en_32k.jsonl", [
        {**base, "pred": "Orrin\u2028Vale", "answers": ["Orrin Vale"]},
        {**base, "pred": "Orrin\x85Vale and more", "answers": ["Orrin Vale"]},
    ])
    # CRLF line ends.
    write_rows(folder / "factrecall_en_64k.jsonl", [{**base, "pred": "Orrin Vale", "answers": ["Orrin Vale"]}],
               newline="\r\n")
    # Only two levels of cmrc: result.csv gets empty cells, and its columns follow first appearance.
    zh = {"gold_ans": None, "input": "谁创建了星海城？", "all_classes": None, "length": 60000}
    write_rows(folder / "cmrc_mixup_64k.jsonl", [{**zh, "pred": "林远舟", "answers": ["林远舟"]}])
    write_rows(folder / "cmrc_mixup_256k.jsonl", [{**zh, "pred": "周书雁", "answers": ["林远舟"]}])
    # Extra fields are ignored.
    write_rows(folder / "lic_mixup_16k.jsonl", [{**zh, "pred": "林远舟", "answers": ["林远舟"], "model": "x",
                                                 "score": 99}])
    # Not .jsonl, or not a file: skipped.
    (folder / "notes.txt").write_text("not a prediction file\n", encoding="utf-8")
    (folder / "eval_result").mkdir(exist_ok=True)
    (folder / "eval_result" / "result.json").write_text("{}", encoding="utf-8")
    return folder


def write_lenient_folder(root: Path, model: str = "lenient-model") -> Path:
    """Files evaluation.py scores although fields it never reads (or reads only in part) look wrong; return the
    folder. Each row says in `why` what it tests."""
    folder = Path(root) / model
    en = {"input": "Who founded Lumeria?", "all_classes": None, "length": 15000}
    zh = {"input": "谁创建了星海城？", "all_classes": None, "length": 60000}
    # Lone carriage returns end lines in text mode; fields the metric never reads may hold anything.
    write_rows(folder / "factrecall_zh_16k.jsonl", [
        {**zh, "pred": "林远舟", "answers": ["林远舟"], "gold_ans": ["林远舟"], "why": "gold_ans list, unread"},
        {**zh, "pred": "周书雁", "answers": ["林远舟"], "gold_ans": None, "length": "60000", "why": "length text"},
        {**zh, "pred": "林远舟说", "answers": ["林远舟"], "gold_ans": None, "input": 42, "why": "input a number"},
        {**zh, "pred": "林远舟", "answers": ["林远舟"], "gold_ans": None, "depth": "middle", "why": "depth text"},
    ], newline="\r")
    # Only answers[0] is read: later items may be anything; gold_ans is never read by dureader's ROUGE-L.
    write_rows(folder / "dureader_mixup_32k.jsonl", [
        {**zh, "pred": "星海城由林远舟创建", "answers": ["星海城是林远舟创建的", 3, None], "gold_ans": {"k": 1},
         "why": "answers tail not strings, gold_ans object"},
        {**zh, "pred": "不知道", "answers": ["林远舟", ["x"]], "gold_ans": True, "length": -5, "why": "negative"},
    ], newline="\r\n")
    # Falsy gold_ans of any type skips the English gate; an object's keys are the answers.
    write_rows(folder / "hotpotwikiqa_mixup_16k.jsonl", [
        {**en, "pred": "Orrin Vale", "answers": {"Orrin Vale": 1, "Other": 2}, "gold_ans": None, "why": "dict"},
        {**en, "pred": "Vale", "answers": ["Orrin Vale"], "gold_ans": 0, "why": "gold_ans 0"},
        {**en, "pred": "Orrin", "answers": ["Orrin Vale"], "gold_ans": [], "why": "gold_ans []"},
        {**en, "pred": "nobody", "answers": ["Orrin Vale"], "gold_ans": False, "length": 1.5, "why": "false"},
        {**en, "pred": "Orrin Vale", "answers": ["Orrin Vale"], "gold_ans": "Orrin Vale", "depth": 3,
         "why": "depth out of range"},
    ])
    # In Chinese an empty gold_ans of any type means: gate on the answer.
    rows = [json.dumps({**zh, "pred": p, "answers": ["林远舟"], "gold_ans": g}, ensure_ascii=False)
            for p, g in (("林远舟", []), ("周书雁", {}), ("林远舟写的", 0))]
    path = folder / "cmrc_mixup_32k.jsonl"
    path.write_bytes((rows[0] + "\r\n" + rows[1] + "\r" + rows[2] + "\n").encode("utf-8"))  # mixed line ends
    return folder


# --- files LV-Eval rejects or crashes on ------------------------------------------------


@dataclass
class _BadFolder:
    folder: Path
    cases: list[BadCase] = field(default_factory=list)

    def file(self, name: str, lines: list[str], case: BadCase | None) -> None:
        path = self.folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
        if case is not None:
            self.cases.append(case)


def write_bad_folder(root: Path, model: str = "broken-model") -> tuple[Path, list[BadCase]]:
    """One problem per file; return the folder and what an importer must report for each."""
    bad = _BadFolder(Path(root) / model)
    ok_en = {"pred": "Orrin Vale", "answers": ["Orrin Vale"], "gold_ans": "Orrin Vale", "input": "Who?",
             "all_classes": None, "length": 16000}
    ok_zh = {"pred": "林远舟", "answers": ["林远舟"], "gold_ans": "林远舟", "input": "谁？", "all_classes": None,
             "length": 16000}

    def line(row: dict) -> str:
        return json.dumps(row, ensure_ascii=False)

    bad.file("narrativeqa_mixup_16k.jsonl", [line(ok_en)],
             BadCase("narrativeqa_mixup_16k.jsonl", None, None, "unknown dataset", "KeyError"))
    # LV-Eval's own pattern accepts any 1-3 character level ending in "k": it scores this file.
    bad.file("cmrc_mixup_48k.jsonl", [line(ok_zh)],
             BadCase("cmrc_mixup_48k.jsonl", None, None, "unknown level", "scored"))
    bad.file("cmrc_mixup_1024k.jsonl", [line(ok_zh)],
             BadCase("cmrc_mixup_1024k.jsonl", None, None, "unknown level", "KeyError"))
    bad.file("hotpotwikiqa_mixup_16k.jsonl", [line(ok_en), line({k: v for k, v in ok_en.items() if k != "answers"})],
             BadCase("hotpotwikiqa_mixup_16k.jsonl", 2, "answers", "missing", "KeyError"))
    bad.file("loogle_SD_mixup_32k.jsonl", [line(ok_en), line(ok_en), line({**ok_en, "gold_ans": "The !!!"})],
             BadCase("loogle_SD_mixup_32k.jsonl", 3, "gold_ans", "normalises to nothing", "ZeroDivisionError"))
    bad.file("multifieldqa_zh_mixup_64k.jsonl", [line({**ok_zh, "gold_ans": "，。！"})],
             BadCase("multifieldqa_zh_mixup_64k.jsonl", 1, "gold_ans", "normalises to nothing",
                     "ZeroDivisionError"))
    # Chinese without keywords gates on the answer, so an answer of punctuation divides by zero too.
    bad.file("lic_mixup_128k.jsonl", [line(ok_zh), line({**ok_zh, "gold_ans": None, "answers": ["。"]})],
             BadCase("lic_mixup_128k.jsonl", 2, "answers", "normalises to nothing", "ZeroDivisionError"))
    bad.file("loogle_CR_mixup_16k.jsonl", [line(ok_en), "{not json"],
             BadCase("loogle_CR_mixup_16k.jsonl", 2, None, "invalid JSON", "JSONDecodeError"))
    bad.file("loogle_MIR_mixup_16k.jsonl", [line({**ok_en, "pred": None})],
             BadCase("loogle_MIR_mixup_16k.jsonl", 1, "pred", "not a string", "AttributeError"))
    bad.file("multifieldqa_en_mixup_16k.jsonl", [line({**ok_en, "answers": None})],
             BadCase("multifieldqa_en_mixup_16k.jsonl", 1, "answers", "not a list", "TypeError"))
    bad.file("factrecall_zh_16k.jsonl", [line({**ok_zh, "answers": [7]})],
             BadCase("factrecall_zh_16k.jsonl", 1, "answers", "not a string", "AttributeError"))
    # A truthy gold_ans that is not a string reaches normalize_answer / jieba in the gated datasets.
    bad.file("loogle_SD_mixup_64k.jsonl", [line(ok_en), line({**ok_en, "gold_ans": ["Orrin"]})],
             BadCase("loogle_SD_mixup_64k.jsonl", 2, "gold_ans", "a string or null", "AttributeError"))
    bad.file("cmrc_mixup_32k.jsonl", [line({**ok_zh, "gold_ans": 7})],
             BadCase("cmrc_mixup_32k.jsonl", 1, "gold_ans", "a string or null", "AttributeError"))
    bad.file("factrecall_en_16k.jsonl", [],
             BadCase("factrecall_en_16k.jsonl", None, None, "no rows", "ZeroDivisionError"))
    return bad.folder, bad.cases


# --- the shipped demo ---------------------------------------------------------------------

# (model, seed, skill, window the rows are generated with, rows per file, factrecall rows per file)
DEMO_MODELS = (
    ("orca-7b-32k", 11, 0.75, 32_768),
    ("heron-13b-128k", 12, 0.62, 131_072),
    ("heron-13b-128k-no-cfi", 12, 0.8, 131_072),
    ("wren-3b-8k", 13, 0.7, None),  # its card says 8k, yet it keeps scoring at 256k: a leakage suspect
)
DEMO_ROWS, DEMO_NEEDLES = 8, 12
# The leaderboard keys and ablation tags the demo loader applies (data/demo/lveval/systems.json).
DEMO_KEYS = {
    "orca-7b-32k": {"context_window": 32768, "parameters": "7B", "retrieval": False, "prompt_engineering": False},
    "heron-13b-128k": {"context_window": 131072, "parameters": "13B", "retrieval": False, "prompt_engineering": False},
    "heron-13b-128k-no-cfi": {"context_window": 131072, "parameters": "13B", "variant_of": "heron-13b-128k",
                              "variant_kind": "no_cfi"},
    "wren-3b-8k": {"context_window": 8192, "parameters": "3B", "in_domain_data": True},
}


def write_demo(root: Path) -> Path:
    """Write the fictional LV-Eval demo (data/demo/lveval): four models, every dataset and level, needle depths."""
    folder = Path(root)
    for model, seed, skill, window in DEMO_MODELS:
        for dataset in DATASETS:
            count = DEMO_NEEDLES if dataset in FACTRECALL else DEMO_ROWS
            for level in LEVELS:
                rows = model_rows(dataset, level, count=count, seed=seed, skill=skill, window=window,
                                  adversarial=False, depth_field="depth")
                write_rows(folder / model / f"{dataset}_{level}.jsonl", rows)
    (folder / "systems.json").write_text(json.dumps(DEMO_KEYS, indent=2, ensure_ascii=False) + "\n",
                                         encoding="utf-8")
    return folder
