"""The Leaderboard as JSON, one owner for the page's /leaderboard/json and the API's /api/v1/leaderboard."""
from __future__ import annotations

from app.services.benchmarks import PLUGINS, plugin
from app.services.metrics.compute import HUMAN_EVAL_BUCKET
from app.services.metrics.leaderboard import leaderboard


def leaderboard_json(profile: str, benchmark: str | None = None) -> dict:
    """Per system every metric the Leaderboard shows, with its row count and profile; each other benchmark's
    table apart, under its key (services.benchmarks). With `benchmark`, that benchmark's table only, as `systems`
    (L-Eval's: "leval")."""
    other = plugin(benchmark) if benchmark else None
    if other is not None:
        return {"profile": profile, "benchmark": other.key, "scale": f"as {other.label}'s own scripts write it "
                "(each system's entry says)", "systems": other.leaderboard_json(profile)}
    leval = {"profile": profile, "scale": "0-100 (lengths in words)", "systems": [
        {"system": row.system, "predictions": row.predictions, "profile": profile, "keys": row.keys,
         "metrics": {m: {"value": v, "n": n, "tasks": row.tasks.get(m)} for m, (v, n) in row.values.items()},
         HUMAN_EVAL_BUCKET: {m: {"value": v, "n": n} for m, (v, n) in row.subset.items()},
         "judge": row.judge}
        for row in leaderboard(profile, "system")
    ]}
    if benchmark:
        return {**leval, "benchmark": benchmark}
    return {**leval, **{p.key: p.leaderboard_json(profile) for p in PLUGINS}}
