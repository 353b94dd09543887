"""OpenCompass's LV-Eval output, all 11 datasets as its loaders and inferencer write them, imports whole and
scores exactly as LV-Eval's own file of the same answers (tests/support/opencompass_lveval.py restates them)."""
from __future__ import annotations

import json

from sqlalchemy import select

from app.core.metrics import PROFILES
from app.core.opencompass import LVEVAL_KEYWORDS_IN_GOLD
from app.extensions import db
from app.models import Prediction, System
from app.services.importers import import_path
from app.services.metrics import score_system
from app.services.uploads.opencompass_folder import import_opencompass_folder
from tests.services.test_opencompass_metrics import stored_metrics
from tests.support.lveval_data import DATASETS, write_model
from tests.support.opencompass_lveval import KEYWORDS_APPENDED, write_both

LEVELS = ("16k", "128k")
ROWS = 18  # every special and adversarial row of lveval_data, and a few plain ones


def stored_rows(name: str) -> dict[int, tuple[str, str | None]]:
    """A system's predictions by question: (text, its own gold_ans)."""
    return {qid: (text, gold) for qid, text, gold in db.session.execute(
        select(Prediction.question_id, Prediction.text, Prediction.gold_ans).join(System)
        .where(System.name == name))}


def test_the_loaders_restated_append_the_keywords_for_seven_datasets():
    assert set(KEYWORDS_APPENDED) == LVEVAL_KEYWORDS_IN_GOLD and LVEVAL_KEYWORDS_IN_GOLD < set(DATASETS)


def test_all_11_lveval_datasets_import_whole_and_score_as_the_native_upload(app, tmp_path):
    # Another model's own files store the questions first (their keywords included), as docs/lveval.md asks.
    write_model(tmp_path / "first", "first-model", seed=0, rows=ROWS, levels=LEVELS)
    native, outputs, total = write_both(tmp_path, native_model="model-b", opencompass_model="model-b-oc", seed=1,
                                        levels=LEVELS, count=ROWS, split={"lic_mixup": 2, "cmrc_mixup": 3})
    golds = {}
    for path in sorted((outputs / "predictions" / "model-b-oc").glob("LVEval_*.json")):
        golds.update({(path.stem, key): row.get("gold") for key, row in
                      json.loads(path.read_text(encoding="utf-8")).items()})
    keyworded = [gold for (stem, _), gold in golds.items()
                 if any(stem.startswith(f"LVEval_{d}_") for d in LVEVAL_KEYWORDS_IN_GOLD)]
    # The fixture holds what the issue saw: every row of the seven datasets ends with its keywords.
    assert len(keyworded) == 7 * len(LEVELS) * ROWS and all(isinstance(g, list) and g for g in keyworded)
    with app.app_context():
        assert not import_path(tmp_path / "first").failed
        result = import_opencompass_folder(outputs)
        assert result.error is None and not result.invalid, [(p.name, p.errors) for p in result.previews if p.errors]
        imported = sum(item["created"] for item in result.imported)
        assert imported == total == 11 * len(LEVELS) * ROWS
        assert all(item["questions_new"] == 0 for item in result.imported)
        assert not import_path(native.parent).failed  # model-b's own files, the same answers
        for name in ("model-b", "model-b-oc"):
            score_system(db.session.scalar(select(System.id).where(System.name == name)), profiles=PROFILES)
        expected_aggregates, expected_items = stored_metrics("model-b")
        aggregates, items = stored_metrics("model-b-oc")
        native_rows, oc_rows = stored_rows("model-b"), stored_rows("model-b-oc")
    # Stored as LV-Eval's file holds them: the same text and keywords for every question.
    assert oc_rows == native_rows and len(oc_rows) == total
    assert sum(gold is not None for _, gold in oc_rows.values()) > total // 2
    assert expected_aggregates and len(expected_items) == total * len(PROFILES)
    assert aggregates == expected_aggregates
    assert items == expected_items
    print(f"\nOpenCompass LV-Eval rows imported: {imported} of {total} (11 datasets x {len(LEVELS)} levels x {ROWS}); "
          f"{len(items)} row scores and {len(aggregates)} aggregates equal to the native upload")
