"""`study create --allocation adaptive …` and `study show --json` with the ranking's live status."""
from __future__ import annotations

import json

from app.services.importers import import_path
from tests.support.study_data import SYSTEMS, write_study_set


def test_create_an_adaptive_study_and_show_its_pairs_and_budget(app, runner, tmp_path):
    folder = write_study_set(tmp_path / "data", documents=2, questions_each=3)
    with app.app_context():
        assert not import_path(folder).failed
    created = runner.invoke(args=["study", "create", "Active", "--allocation", "adaptive", "--budget-documents", "4",
                                  "--budget-answers", "30", "--min-per-answer", "2", "--tie-margin", "0.25",
                                  "--calibration-documents", "1", "--start-window-hours", "12",
                                  "--max-documents-per-annotator", "3", "--open"])
    assert created.exit_code == 0, created.output
    shown = runner.invoke(args=["study", "show", "Active", "--json"])
    assert shown.exit_code == 0, shown.output
    data = json.loads(shown.output)
    assert data["allocation"] == "adaptive"
    adaptive = data["adaptive"]
    assert adaptive["budget"] == {"documents": 4, "answers": 30, "hours": None, "min_per_answer": 2, "tie_margin": 0.25,
                                  "calibration_documents": 1, "start_window_hours": 12.0,
                                  "max_documents_per_annotator": 3}
    assert adaptive["annotators"] == [] and adaptive["calibration_documents"]
    assert adaptive["spent"] == {"documents": 0, "answers": 0, "scored": 0, "hours": 0.0}
    assert adaptive["settled_pairs"] == [] and len(adaptive["unsettled_pairs"]) == len(SYSTEMS) - 1
    assert "Bonferroni" in adaptive["correction"] and "not a uniform sample" in adaptive["note"]
    text = runner.invoke(args=["study", "show", "Active"]).output
    assert "adaptive: not settled yet" in text and "too little data" in text


def test_adaptive_options_are_checked_with_a_clear_error(app, runner, tmp_path):
    folder = write_study_set(tmp_path / "data", documents=1, questions_each=2)
    with app.app_context():
        assert not import_path(folder).failed
    result = runner.invoke(args=["study", "create", "NoBudget", "--allocation", "adaptive"])
    assert result.exit_code != 0 and "needs a budget" in result.output
    result = runner.invoke(args=["study", "create", "Mixed", "--budget-documents", "3"])
    assert result.exit_code != 0 and "adaptive study" in result.output
    fixed = runner.invoke(args=["study", "show", "NoBudget", "--json"])
    assert fixed.exit_code != 0  # nothing was created
