"""Write OpenCompass output folders at test time: `predictions/<model_abbr>/<dataset_abbr>[_N].json`.

The prompts follow OpenCompass's L-Eval configs (opencompass/configs/datasets/leval/*/leval_*_gen_*.py) and
the rows its GenInferencerOutputHandler.save_results: {"origin_prompt", "prediction", "gold"} under "0", "1", …
"""
from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

from app.core.opencompass import leval_gold

CLOSED_SYSTEM = ("Now you are given a very long document. Please follow the instruction based on this document. "
                 "For multi-choice questions, there could be a single correct option or multiple correct options. "
                 "Please only provide the letter corresponding to the answer (like A or AB) when answering.")
OPEN_SYSTEM = ("Now you are given a very long document. Please follow the instruction after this document. These "
               "instructions may include summarizing a document, answering questions based on the document, or "
               "writing a required paragraph.")
CLOSED_TASKS = {"coursera", "quality", "tpo", "topic_retrieval_longchat"}


def leval_prompt(task: str, context: str, question: str, answer: str, *, as_messages: bool) -> str | list[dict]:
    """origin_prompt as OpenCompass renders it: a string (local models) or SYSTEM/HUMAN messages (API models)."""
    if task in CLOSED_TASKS:
        system, human = CLOSED_SYSTEM, f"Document is as follows.\n{context}\nQuestion:{question}\nAnswer:"
    elif task == "gsm100":
        system = ("Given several question answer pairs, you need to follow a similar format to answer the last "
                  "question. Make sure the response is end with The answer is _ . ")
        human = f"{context}\n\n{question}\n"
    else:
        mark = "?" if task == "natural_question" else ""
        system = OPEN_SYSTEM
        human = (f"Document is as follows. {context}\nInstruction: {question}{mark}\n"
                 f"Answer this question with {len(answer.split())} words.")
    if as_messages:
        return [{"role": "SYSTEM", "prompt": system}, {"role": "HUMAN", "prompt": human}]
    return f"{system}\n{human}"


def rows_from_leval(task_file: Path, pred_file: Path, *, as_messages: bool = False) -> list[dict]:
    """OpenCompass rows for the predictions of an L-Eval `.pred.jsonl`, in its order.

    The k-th row with a (query, gt) gets the k-th document with that question and answer in the task file,
    as the `.pred.jsonl` import pairs them.
    """
    task = task_file.stem
    documents: dict[tuple[str, str], list[str]] = defaultdict(list)
    for line in task_file.read_text(encoding="utf-8").splitlines():
        doc = json.loads(line)
        for question, answer in zip(doc["instructions"], doc["outputs"]):
            documents[(" ".join(question.split()), " ".join(answer.split()))].append(doc["input"])
    taken: dict[tuple[str, str], int] = defaultdict(int)
    rows = []
    for line in pred_file.read_text(encoding="utf-8").splitlines():
        pred = json.loads(line)
        key = (" ".join(pred["query"].split()), " ".join(pred["gt"].split()))
        context = documents[key][taken[key]]
        taken[key] += 1
        prediction = next(value for name, value in pred.items() if name.endswith("_pred"))
        row = {"origin_prompt": leval_prompt(task, context, pred["query"], pred["gt"], as_messages=as_messages),
               "prediction": prediction}
        gold = leval_gold(task, pred["gt"])  # what OpenCompass's loader makes of the answer (quality: its letter)
        if gold:  # save_results leaves `gold` out when the answer is empty
            row["gold"] = gold
        rows.append(row)
    return rows


def write_dataset(root: Path, model: str, abbr: str, rows: list[dict], *, parts: int = 1) -> list[Path]:
    """Write one dataset's rows, split into `parts` files `<abbr>_0.json`, … as the partitioner does (or whole)."""
    folder = root / "predictions" / model
    folder.mkdir(parents=True, exist_ok=True)
    if parts == 1:
        chunks = [(folder / f"{abbr}.json", rows)]
    else:
        step = -(-len(rows) // parts)
        chunks = [(folder / f"{abbr}_{i}.json", rows[i * step:(i + 1) * step]) for i in range(parts)]
    for path, chunk in chunks:
        path.write_text(json.dumps({str(i): row for i, row in enumerate(chunk)}, indent=4, ensure_ascii=False),
                        encoding="utf-8")
    return [path for path, _ in chunks]


# A tiny L-Eval task written by the tests: two documents ask the same question with the same answer, so only
# the document in the prompt tells their rows apart.
TINY_DOCS = [
    {"input": "The harbour of Velmora froze in the winter of the great storm. Ships waited for weeks.",
     "instructions": ["Which harbour froze? (A) Velmora (B) Ostrand", "How long did ships wait? (A) days (B) weeks"],
     "outputs": ["(A)", "(B)"]},
    {"input": "Ostrand kept its harbour open all year, and traders came from the south.",
     "instructions": ["Which harbour froze? (A) Velmora (B) Ostrand"], "outputs": ["(A)"]},
]


def write_tiny_task(folder: Path) -> Path:
    """quality.jsonl with TINY_DOCS (L-Eval's task file format), to import with import_path."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "quality.jsonl"
    path.write_text("\n".join(json.dumps({**doc, "source": "tiny", "evaluation": "exam"}) for doc in TINY_DOCS) + "\n",
                    encoding="utf-8")
    return path


def tiny_rows(answers: tuple[str, ...] = ("(A)", "(B)", "(A)"), *, as_messages: bool = False) -> list[dict]:
    """One OpenCompass row per tiny question, in the loader's order, answering `answers`."""
    pairs = [(doc, q, a) for doc in TINY_DOCS for q, a in zip(doc["instructions"], doc["outputs"])]
    return [{"origin_prompt": leval_prompt("quality", doc["input"], q, a, as_messages=as_messages),
             "prediction": answer, "gold": leval_gold("quality", a)} for (doc, q, a), answer in zip(pairs, answers)]


def folder_bytes(root: Path) -> dict[str, bytes]:
    """Every file under root by its posix path below root, for a zip."""
    return {path.relative_to(root).as_posix(): path.read_bytes() for path in sorted(root.rglob("*")) if path.is_file()}
