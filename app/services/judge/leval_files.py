"""The `leval` profile on two prediction files: llm_eval.py's reading and pairing, judged with the DB cache.

The files are only read (never imported): llm_eval.py pairs rows by their raw text, which need
not match any stored question. Lines llm_eval.py drops without a word are listed in the notes.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from app.core.judge.leval_pairing import LevalPairing, LevalPairingError, pair_files
from app.core.judge.profiles import LEVAL
from app.core.metrics.files import FileFormatError, llm_eval_rows
from app.services.judge.job import PreparedRun
from app.services.judge.pairs import JudgePair, PairError
from app.services.judge.prompt_versions import ensure_profile_prompt
from app.services.judge.reports import RunSpec
from app.services.judge.settings import JudgeSettings


@dataclass
class LevalFileRun:
    run: PreparedRun
    pairing: LevalPairing
    notes: list[str] = field(default_factory=list)


def leval_file_run(pred_path: Path, battle_path: Path, *, judge_model: str, settings: JudgeSettings,
                   scope: str) -> LevalFileRun:
    """Read and pair two files as llm_eval.py does; raise PairError where it would stop."""
    notes: list[str] = []
    read = {}
    for path in (pred_path, battle_path):
        try:
            rows = llm_eval_rows(path.read_bytes(), path.name)
        except OSError as exc:
            raise PairError(f"{path}: {exc.strerror or exc}") from None
        for problem in rows.dropped:
            notes.append(f"dropped as llm_eval.py drops it: {problem}")
        if rows.not_judged:
            notes.append(f"{path.name}: {rows.not_judged} rows not judged (llm_eval.py judges only the f1/rouge rows "
                         "of a file that has any)")
        read[path] = rows
    try:
        pairing = pair_files(read[pred_path], read[battle_path], pred_path.name, battle_path.name)
    except (LevalPairingError, FileFormatError) as exc:
        raise PairError(str(exc)) from None
    if pairing.unpaired:
        notes.append(f"{pairing.unpaired} rows of {pred_path.name} have no query + gt in {battle_path.name} and are "
                     "not judged (as llm_eval.py)")
    if pairing.same_name:
        notes.append(f"both files use the name {pairing.system_name!r}: as llm_eval.py does, the battle file's answers "
                     "are judged against themselves and every win counts for that one name")
    prompt = ensure_profile_prompt(LEVAL)
    spec = RunSpec(pairing.system_name, pairing.baseline_name, judge_model, prompt.id, 0.0, scope, LEVAL)
    pairs = [JudgePair(item, None) for item in pairing.items]
    return LevalFileRun(PreparedRun(spec, prompt, pairs, settings, None, None), pairing, notes)
