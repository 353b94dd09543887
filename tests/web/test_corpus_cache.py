"""The LV-Eval page and the leaderboard are computed once per change of the data they read (issue 38).

At lab scale they read every LV-Eval row score (a bootstrap per cell) and count every prediction: 0.2 to
0.5 s a view. The oracle is the computation counted, and the page after an import that changes it.
"""
from __future__ import annotations

import pytest

from app.services.lveval import import_models, report
from app.services.metrics import leaderboard as board
from app.services.metrics.job import score_unscored_systems
from tests.support.lveval_data import write_model


@pytest.fixture
def counting(monkeypatch):
    def count(module, name):
        calls = []
        real = getattr(module, name)

        def counted(*args, **kwargs):
            calls.append(args)
            return real(*args, **kwargs)

        monkeypatch.setattr(module, name, counted)
        return calls
    return count


def test_the_lveval_page_and_the_leaderboard_are_computed_once_per_change(demo, client, auth, counting, tmp_path):
    with demo.app_context():
        score_unscored_systems()
    views = counting(report, "_build_view")
    boards = counting(board, "_board")
    auth.login("researcher")
    for _ in range(2):
        assert client.get("/lveval").status_code == 200
        assert client.get("/leaderboard").status_code == 200
        assert client.get("/leaderboard/json").status_code == 200
    assert len(views) == 1 and len(boards) == 1, (views, boards)
    with demo.app_context():  # a new model arrives: both read it
        assert not import_models(write_model(tmp_path, "newcomer-7b", seed=5, rows=4), demo=True).failed
        score_unscored_systems()
    page = client.get("/lveval").get_data(as_text=True)
    assert 'data-system="newcomer-7b"' in page and len(views) == 2
    assert "newcomer-7b" in client.get("/leaderboard/json").get_data(as_text=True) and len(boards) == 2
