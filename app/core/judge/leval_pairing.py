"""Pair two prediction files as L-Eval's llm_eval.py does (`construct_pairs`), for the `leval` profile.

Both files are read with llm_eval.py's rules (metrics.files.llm_eval_rows) and must keep the same
number of rows. The prediction key is the first key containing `_pred` in the first kept row of
the predictions, and the last such key in the battle file's. Battle rows are indexed by the raw
text `query + gt` (a later duplicate replaces an earlier one); each prediction row whose
`str(query) + str(gt)` is indexed is judged, in file order (duplicates again). The battle answer
is written into the prediction row under the battle key, so when both files use the same key both
sides of every pair are the battle file's answer. Values are put into the prompt with
`format(value)`, as `str.format` does.
"""
from __future__ import annotations

from dataclasses import dataclass

from app.core.metrics.files import FileFormatError, JudgeFileRows, last_prediction_key, prediction_key
from app.core.judge.prompt import PairItem


class LevalPairingError(ValueError):
    """Where llm_eval.py would stop (a failed assert or a KeyError), with the reason."""


@dataclass(frozen=True)
class LevalPairing:
    items: list[PairItem]
    pred_key: str
    battle_key: str
    system_name: str  # the model names llm_eval.py counts wins under
    baseline_name: str
    unpaired: int  # prediction rows whose query + gt the battle file lacks (dropped silently upstream)

    @property
    def same_name(self) -> bool:
        return self.system_name == self.baseline_name


def model_name(key: str) -> str:
    """llm_eval.py's name for a key: every "_pred" removed."""
    return key.replace("_pred", "")


def _text(value: object) -> str:
    return format(value)


def pair_files(pred: JudgeFileRows, battle: JudgeFileRows, pred_name: str, battle_name: str) -> LevalPairing:
    """Pair the kept rows of two files; raise LevalPairingError where llm_eval.py would crash."""
    if len(pred.rows) != len(battle.rows):
        raise LevalPairingError(f"{pred_name} keeps {len(pred.rows)} rows and {battle_name} {len(battle.rows)}: "
                                "llm_eval.py asserts they are equal")
    if not pred.rows:
        raise LevalPairingError(f"{pred_name}: no row to judge (llm_eval.py fails on an empty file)")
    pred_key = prediction_key(pred.rows[0].data)
    battle_key = last_prediction_key(battle.rows[0].data)
    for name, key, row in ((pred_name, pred_key, pred.rows[0]), (battle_name, battle_key, battle.rows[0])):
        if key is None:
            raise FileFormatError(name, "no key containing '_pred' in the first judged row", line=row.line,
                                  field="<model>_pred")
    by_text: dict[str, object] = {}
    for row in battle.rows:
        for field in ("query", "gt", battle_key):
            if field not in row.data:
                raise FileFormatError(battle_name, "missing", line=row.line, field=field)
        query, gt = row.data["query"], row.data["gt"]
        if not (isinstance(query, str) and isinstance(gt, str)):
            raise FileFormatError(battle_name, "query and gt must be text (llm_eval.py concatenates them)",
                                  line=row.line, field="query" if not isinstance(query, str) else "gt")
        by_text[query + gt] = row.data[battle_key]
    items, unpaired = [], 0
    for number, row in enumerate(pred.rows):
        for field in ("query", "gt"):
            if field not in row.data:
                raise FileFormatError(pred_name, "missing", line=row.line, field=field)
        text = str(row.data["query"]) + str(row.data["gt"])
        if text not in by_text:
            unpaired += 1
            continue
        sample = {**row.data, battle_key: by_text[text]}
        if pred_key not in sample:
            raise FileFormatError(pred_name, "missing", line=row.line, field=pred_key)
        items.append(PairItem(f"row{number}", _text(sample["query"]), _text(sample["gt"]), _text(sample[pred_key]),
                              _text(sample[battle_key])))
    return LevalPairing(items, pred_key, battle_key, model_name(pred_key), model_name(battle_key), unpaired)
